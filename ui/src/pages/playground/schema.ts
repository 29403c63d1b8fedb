// The tool playground's form model: which input each part of a tool's JSON Schema gets, and
// how the values typed into those inputs become the call's arguments.
//
// The form keeps what the user typed (text for numbers, so "1." is not lost mid-typing),
// keyed by path; `buildArgs` turns it into arguments and names every field it cannot
// convert. The gateway checks the arguments against the full schema on the call path, so
// this only needs to be helpful, not complete: parts of a schema the form does not model
// (oneOf, arrays of objects, no type) get a JSON box of their own.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Schema = { [key: string]: Json };

/** The kinds of input the form renders. */
export type Kind = "string" | "number" | "integer" | "boolean" | "enum" | "object" | "array" | "json";

/** What the user has typed, by path (`region`, `limits/cpu`, `tags/0`). */
export type FormState = Record<string, string | boolean | string[]>;

export function isObject(v: unknown): v is { [key: string]: Json } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The `type` of a schema, taking `["string", "null"]` as `string`. */
function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null");
  return undefined;
}

/** The input for `schema`. */
export function kindOf(schema: Schema): Kind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  switch (typeOf(schema)) {
    case "string":
      return "string";
    case "number":
      return "number";
    case "integer":
      return "integer";
    case "boolean":
      return "boolean";
    case "object":
      return isObject(schema.properties) ? "object" : "json";
    case "array": {
      const items = isObject(schema.items) ? (schema.items as Schema) : null;
      const k = items ? kindOf(items) : "json";
      return k === "object" || k === "array" || k === "json" ? "json" : "array";
    }
    default:
      return "json";
  }
}

/** `properties` of an object schema, as `[name, schema]`. */
export function propertiesOf(schema: Schema): [string, Schema][] {
  return isObject(schema.properties)
    ? Object.entries(schema.properties).filter((e): e is [string, Schema] => isObject(e[1]))
    : [];
}

export function requiredOf(schema: Schema): Set<string> {
  return new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : []);
}

export const join = (path: string, name: string) => (path ? `${path}/${name}` : name);

/** What an input shows for `value` (a default, or arguments being turned back into a form). */
function scalarText(kind: Kind, schema: Schema, value: Json): string | boolean {
  if (kind === "boolean") return value === true;
  if (kind === "enum") {
    const i = (schema.enum as Json[]).findIndex((e) => JSON.stringify(e) === JSON.stringify(value));
    return i < 0 ? "" : String(i);
  }
  if (kind === "json") return JSON.stringify(value, null, 2);
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The form for `schema` filled with `value` (or each field's `default` where `value` has none). */
export function formFrom(schema: Schema, value: Json | undefined, path = "", into: FormState = {}): FormState {
  for (const [name, prop] of propertiesOf(schema)) {
    const p = join(path, name);
    const v = isObject(value) && name in value ? value[name] : prop.default;
    const kind = kindOf(prop);
    if (kind === "object") formFrom(prop, v, p, into);
    else if (kind === "array") {
      if (Array.isArray(v)) into[p] = v.map((x) => String(scalarText(kindOf(prop.items as Schema), prop.items as Schema, x)));
    } else if (v !== undefined) into[p] = scalarText(kind, prop, v);
  }
  return into;
}

/** The arguments, or the problems that keep the form from making them. */
export interface Built {
  args: { [key: string]: Json };
  problems: string[];
}

/** Turns the form into the arguments for `schema` (an object schema). */
export function buildArgs(schema: Schema, form: FormState): Built {
  const problems: string[] = [];
  const args = buildObject(schema, form, "", problems) ?? {};
  return { args, problems };
}

/** `undefined` when no field under `path` was filled (and none is required there). */
function buildObject(schema: Schema, form: FormState, path: string, problems: string[]): { [key: string]: Json } | undefined {
  const out: { [key: string]: Json } = {};
  const required = requiredOf(schema);
  for (const [name, prop] of propertiesOf(schema)) {
    const p = join(path, name);
    const value = buildValue(prop, form, p, problems);
    if (value !== undefined) out[name] = value;
    else if (required.has(name) && kindOf(prop) === "boolean") out[name] = false;
    else if (required.has(name)) problems.push(`'${p}' is required`);
  }
  return Object.keys(out).length > 0 || path === "" ? out : undefined;
}

function buildValue(schema: Schema, form: FormState, path: string, problems: string[]): Json | undefined {
  const kind = kindOf(schema);
  if (kind === "object") return buildObject(schema, form, path, problems);
  if (kind === "array") {
    const items = (form[path] as string[] | undefined) ?? [];
    const out: Json[] = [];
    items.forEach((text, i) => {
      const v = scalar(schema.items as Schema, text, `${path}/${i}`, problems);
      if (v !== undefined) out.push(v);
    });
    return items.length > 0 ? out : undefined;
  }
  return scalar(schema, form[path] as string | boolean | undefined, path, problems);
}

function scalar(schema: Schema, raw: string | boolean | undefined, path: string, problems: string[]): Json | undefined {
  const kind = kindOf(schema);
  // A box the user never touched (and with no default) sends nothing; once touched, its
  // state is sent, so unchecking a `default: true` box says `false`.
  if (kind === "boolean") return typeof raw === "boolean" ? raw : undefined;
  if (raw === undefined || raw === "" || typeof raw === "boolean") return undefined;
  const text = String(raw);
  switch (kind) {
    case "enum": {
      const options = schema.enum as Json[];
      return options[Number(text)];
    }
    case "number":
    case "integer": {
      const n = Number(text.trim());
      if (!Number.isFinite(n) || text.trim() === "") problems.push(`'${path}' must be a number`);
      else if (kind === "integer" && !Number.isInteger(n)) problems.push(`'${path}' must be a whole number`);
      else return n;
      return undefined;
    }
    case "json":
      try {
        return JSON.parse(text) as Json;
      } catch (e) {
        problems.push(`'${path}' is not valid JSON: ${(e as Error).message}`);
        return undefined;
      }
    default:
      return text;
  }
}

/** Raw JSON arguments: an object, or why not. */
export function parseRaw(text: string): { args?: { [key: string]: Json }; problem?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === "" ? "{}" : text);
  } catch (e) {
    return { problem: `Invalid JSON: ${(e as Error).message}` };
  }
  if (!isObject(value)) return { problem: "The arguments must be a JSON object ({…})" };
  return { args: value };
}
