/**
 * A small JSON Schema validator for the subset tool parameters use.
 *
 * The gateway validates arguments too, but the SDK checks again before calling a handler so a
 * handler can trust its input whatever sent the call (an older gateway, a test harness, a
 * schema changed by `setTools` while a call was in flight).
 *
 * Supported keywords: type (one or a list), enum, const, properties, required,
 * additionalProperties (boolean or schema), items (one schema), minItems, maxItems,
 * minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum, exclusiveMaximum
 * (numbers), multipleOf, allOf, anyOf, oneOf, not. Other keywords (format, $ref, …) are
 * ignored here, i.e. accepted; the gateway enforces them.
 */

export type JsonSchema = { [key: string]: unknown } | boolean;

/** The first failure found, with a JSON Pointer to the offending value. */
export interface SchemaError {
  path: string;
  message: string;
}

const TYPE_CHECKS: Record<string, (v: unknown) => boolean> = {
  object: (v) => typeof v === "object" && v !== null && !Array.isArray(v),
  array: (v) => Array.isArray(v),
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  integer: (v) => typeof v === "number" && Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  null: (v) => v === null,
};

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? s.slice(0, 77) + "..." : s;
}

function pointer(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as any)[k], (b as any)[k]));
}

/** Returns the first violation of `schema` by `value`, or `null` when it conforms. */
export function validate(schema: JsonSchema | undefined, value: unknown, path = ""): SchemaError | null {
  if (schema === undefined || schema === true) return null;
  if (schema === false) return { path, message: `${show(value)} is not allowed here` };
  const s = schema as Record<string, any>;
  const fail = (message: string): SchemaError => ({ path, message });

  if (s.type !== undefined) {
    const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((t) => TYPE_CHECKS[t]?.(value) ?? true)) {
      return fail(`${show(value)} is not of type ${types.map((t) => `"${t}"`).join(" or ")}`);
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e: unknown) => deepEqual(e, value))) {
    return fail(`${show(value)} is not one of ${show(s.enum)}`);
  }
  if ("const" in s && !deepEqual(s.const, value)) return fail(`${show(value)} is not ${show(s.const)}`);

  if (typeof value === "string") {
    const length = [...value].length; // code points, as JSON Schema counts
    if (typeof s.minLength === "number" && length < s.minLength) return fail(`${show(value)} is shorter than ${s.minLength} characters`);
    if (typeof s.maxLength === "number" && length > s.maxLength) return fail(`${show(value)} is longer than ${s.maxLength} characters`);
    if (typeof s.pattern === "string") {
      let re: RegExp | null = null;
      try {
        re = new RegExp(s.pattern, "u");
      } catch {
        re = null; // a pattern JS cannot compile is the gateway's to judge, not a reason to refuse the call
      }
      if (re && !re.test(value)) return fail(`${show(value)} does not match ${show(s.pattern)}`);
    }
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) return fail(`${value} is less than the minimum of ${s.minimum}`);
    if (typeof s.maximum === "number" && value > s.maximum) return fail(`${value} is greater than the maximum of ${s.maximum}`);
    if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum) return fail(`${value} is not greater than ${s.exclusiveMinimum}`);
    if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum) return fail(`${value} is not less than ${s.exclusiveMaximum}`);
    if (typeof s.multipleOf === "number" && s.multipleOf > 0) {
      const q = value / s.multipleOf;
      if (Math.abs(q - Math.round(q)) > 1e-9) return fail(`${value} is not a multiple of ${s.multipleOf}`);
    }
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) return fail(`has fewer than ${s.minItems} items`);
    if (typeof s.maxItems === "number" && value.length > s.maxItems) return fail(`has more than ${s.maxItems} items`);
    if (s.items !== undefined && !Array.isArray(s.items)) {
      for (let i = 0; i < value.length; i++) {
        const e = validate(s.items, value[i], pointer(path, i));
        if (e) return e;
      }
    }
  }
  if (TYPE_CHECKS.object(value)) {
    const obj = value as Record<string, unknown>;
    if (Array.isArray(s.required)) {
      for (const key of s.required) {
        if (typeof key === "string" && !(key in obj)) return fail(`${show(key)} is a required property`);
      }
    }
    const props: Record<string, JsonSchema> = s.properties && typeof s.properties === "object" ? s.properties : {};
    for (const [key, v] of Object.entries(obj)) {
      if (key in props) {
        const e = validate(props[key], v, pointer(path, key));
        if (e) return e;
      } else if (s.additionalProperties === false) {
        return fail(`additional property ${show(key)} is not allowed`);
      } else if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
        const e = validate(s.additionalProperties, v, pointer(path, key));
        if (e) return e;
      }
    }
  }
  if (Array.isArray(s.allOf)) {
    for (const sub of s.allOf) {
      const e = validate(sub, value, path);
      if (e) return e;
    }
  }
  if (Array.isArray(s.anyOf) && !s.anyOf.some((sub: JsonSchema) => validate(sub, value, path) === null)) {
    return fail(`${show(value)} is not valid under any of the given schemas`);
  }
  if (Array.isArray(s.oneOf)) {
    const matches = s.oneOf.filter((sub: JsonSchema) => validate(sub, value, path) === null).length;
    if (matches !== 1) return fail(`${show(value)} is valid under ${matches} of the given schemas, not exactly one`);
  }
  if (s.not !== undefined && validate(s.not, value, path) === null) return fail(`${show(value)} should not be valid under ${show(s.not)}`);
  return null;
}

/** The message the SDK answers with, worded like the gateway's own argument check. */
export function argumentsError(tool: string, err: SchemaError): string {
  return `Invalid arguments for tool '${tool}' at '${err.path}': ${err.message}`;
}
