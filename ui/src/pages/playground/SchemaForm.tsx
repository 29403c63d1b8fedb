import type { JSX } from "preact";
import { join, kindOf, propertiesOf, requiredOf, type FormState, type Json, type Schema } from "./schema";

interface Props {
  schema: Schema;
  form: FormState;
  onChange(form: FormState): void;
}

/** The inputs for an object schema's properties (see schema.ts for what each kind gets). */
export function SchemaForm({ schema, form, onChange }: Props) {
  const set = (path: string, value: string | boolean | string[] | undefined) => {
    const next = { ...form };
    if (value === undefined) delete next[path];
    else next[path] = value;
    onChange(next);
  };
  const props = propertiesOf(schema);
  if (props.length === 0) return <p class="muted small">This tool takes no arguments.</p>;
  return <Fields schema={schema} path="" form={form} set={set} />;
}

type Set = (path: string, value: string | boolean | string[] | undefined) => void;

function Fields({ schema, path, form, set }: { schema: Schema; path: string; form: FormState; set: Set }) {
  const required = requiredOf(schema);
  return (
    <div class="pg-fields">
      {/* Required fields first; the rest in the schema's order. */}
      {[...propertiesOf(schema)]
        .sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)))
        .map(([name, prop]) => (
        <Field key={name} name={name} schema={prop} path={join(path, name)} required={required.has(name)} form={form} set={set} />
      ))}
    </div>
  );
}

interface FieldProps {
  name: string;
  schema: Schema;
  path: string;
  required: boolean;
  form: FormState;
  set: Set;
}

function Field({ name, schema, path, required, form, set }: FieldProps) {
  const kind = kindOf(schema);
  const description = typeof schema.description === "string" ? schema.description : null;
  const type = kind === "enum" ? "one of" : kind === "array" ? `array of ${kindOf(schema.items as Schema)}` : kind;
  const id = `pg-field-${path}`;
  const label = (
    <span class="pg-label">
      <span class="mono strong">{name}</span>
      {required && <span class="pg-required"> required</span>} <span class="muted small">{type}</span>
    </span>
  );
  const help = description ? <span class="muted small pg-help">{description}</span> : null;

  if (kind === "object") {
    return (
      <fieldset class="pg-object">
        <legend>{label}</legend>
        {help}
        <Fields schema={schema} path={path} form={form} set={set} />
      </fieldset>
    );
  }
  if (kind === "boolean") {
    return (
      <div class="pg-field">
        <label class="check" for={id}>
          <input id={id} type="checkbox" checked={form[path] === true} onChange={(e) => set(path, e.currentTarget.checked)} />
          {label}
        </label>
        {help}
      </div>
    );
  }
  if (kind === "array") {
    return <ArrayField name={name} schema={schema} path={path} form={form} set={set} label={label} help={help} />;
  }
  return (
    <div class="pg-field">
      <label for={id}>{label}</label>
      <Scalar id={id} schema={schema} value={form[path] as string | undefined} required={required} onInput={(v) => set(path, v || undefined)} />
      {help}
    </div>
  );
}

function Scalar(p: { id: string; label?: string; schema: Schema; value: string | undefined; required: boolean; onInput(v: string): void }) {
  const kind = kindOf(p.schema);
  const value = p.value ?? "";
  if (kind === "enum") {
    return (
      <select id={p.id} aria-label={p.label} value={value} onChange={(e) => p.onInput(e.currentTarget.value)}>
        <option value="">{p.required ? "choose…" : "(not set)"}</option>
        {(p.schema.enum as Json[]).map((option, i) => (
          <option key={i} value={String(i)}>
            {typeof option === "string" ? option : JSON.stringify(option)}
          </option>
        ))}
      </select>
    );
  }
  if (kind === "json") {
    return (
      <textarea id={p.id} aria-label={p.label} class="mono" rows={3} spellcheck={false} placeholder="JSON" value={value} onInput={(e) => p.onInput(e.currentTarget.value)} />
    );
  }
  const numeric = kind === "number" || kind === "integer";
  const bound = (v: Json | undefined) => (numeric && typeof v === "number" ? v : undefined);
  return (
    <input
      id={p.id}
      aria-label={p.label}
      type={numeric ? "number" : "text"}
      step={numeric ? (kind === "integer" ? 1 : "any") : undefined}
      inputMode={numeric ? (kind === "integer" ? "numeric" : "decimal") : undefined}
      min={bound(p.schema.minimum)}
      max={bound(p.schema.maximum)}
      value={value}
      spellcheck={false}
      onInput={(e) => p.onInput(e.currentTarget.value)}
    />
  );
}

function ArrayField(p: { name: string; schema: Schema; path: string; form: FormState; set: Set; label: JSX.Element; help: JSX.Element | null }) {
  const items = (p.form[p.path] as string[] | undefined) ?? [];
  const itemSchema = p.schema.items as Schema;
  const change = (next: string[]) => p.set(p.path, next.length > 0 ? next : undefined);
  return (
    <fieldset class="pg-array">
      <legend>{p.label}</legend>
      {p.help}
      {items.length === 0 && <span class="muted small">empty</span>}
      {items.map((v, i) => (
        <div class="pg-array-item" key={i}>
          <Scalar
            id={`pg-field-${p.path}/${i}`}
            label={`${p.name} item ${i + 1}`}
            schema={itemSchema}
            value={v}
            required
            onInput={(text) => change(items.map((x, j) => (j === i ? text : x)))}
          />
          <button type="button" class="btn" aria-label={`Remove ${p.name} item ${i + 1}`} onClick={() => change(items.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="btn" onClick={() => change([...items, ""])}>
        Add item
      </button>
    </fieldset>
  );
}
