/** One field of an elicitation form, read from a `requestedSchema` property. */
export type FormField = {
  readonly name: string;
  readonly label: string;
  readonly hint: string | null;
  readonly required: boolean;
} & (
  | {
      readonly kind: "text";
      readonly inputMode: "text" | "email" | "url";
      readonly minLength?: number;
      readonly maxLength?: number;
      readonly initial: string;
    }
  | { readonly kind: "number"; readonly integer: boolean; readonly min?: number; readonly max?: number; readonly initial: string }
  | { readonly kind: "boolean"; readonly initial: boolean }
  | { readonly kind: "choice"; readonly choices: readonly Choice[]; readonly initial: string }
  | { readonly kind: "multi"; readonly choices: readonly Choice[]; readonly initial: readonly string[] }
  | { readonly kind: "unsupported"; readonly type: string }
);

interface Choice {
  readonly value: string;
  readonly label: string;
}

export type FieldValue = string | boolean | readonly string[];

type Loose = Record<string, unknown>;

const isObject = (value: unknown): value is Loose => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined);

/**
 * The fields of a form schema (`{ properties, required }`), in order. The schema comes from an agent,
 * possibly through REST as plain JSON, so it is read defensively: anything unknown is `unsupported`.
 */
export function formFields(schema: unknown): FormField[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : []);
  return Object.entries(schema.properties).map(([name, property]) => fieldOf(name, isObject(property) ? property : {}, required.has(name)));
}

function fieldOf(name: string, p: Loose, required: boolean): FormField {
  const base = { name, label: text(p.title) || name, hint: text(p.description) ?? null, required };
  const type = text(p.type) ?? "string";
  switch (type) {
    case "string": {
      const choices = choicesOf(p);
      if (choices.length > 0) return { ...base, kind: "choice", choices, initial: text(p.default) ?? (required ? choices[0]!.value : "") };
      return {
        ...base,
        kind: "text",
        inputMode: inputModeOf(p.format),
        minLength: num(p.minLength),
        maxLength: num(p.maxLength),
        initial: text(p.default) ?? "",
      };
    }
    case "number":
    case "integer":
      return {
        ...base,
        kind: "number",
        integer: type === "integer",
        min: num(p.minimum),
        max: num(p.maximum),
        initial: num(p.default)?.toString() ?? "",
      };
    case "boolean":
      return { ...base, kind: "boolean", initial: p.default === true };
    case "array": {
      const initial = Array.isArray(p.default) ? p.default.filter((v): v is string => typeof v === "string") : [];
      return { ...base, kind: "multi", choices: choicesOf(isObject(p.items) ? p.items : {}), initial };
    }
    default:
      return { ...base, kind: "unsupported", type };
  }
}

function choicesOf(p: Loose): Choice[] {
  const titled = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : null;
  if (titled) {
    return titled.filter(isObject).map((o) => ({ value: String(o.const), label: text(o.title) ?? String(o.const) }));
  }
  return Array.isArray(p.enum) ? p.enum.map((v) => ({ value: String(v), label: String(v) })) : [];
}

/** A keyboard hint for phones; the agent validates the format itself. */
function inputModeOf(format: unknown): "text" | "email" | "url" {
  return format === "email" ? "email" : format === "uri" ? "url" : "text";
}

/** The form's content in the schema's types; empty optional fields are left out. */
export function formContent(fields: readonly FormField[], values: Readonly<Record<string, FieldValue>>): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === "unsupported" || value === undefined) continue;
    if (field.kind === "boolean") content[field.name] = value === true;
    else if (field.kind === "multi") content[field.name] = value;
    else if (value === "" && !field.required) continue;
    else content[field.name] = field.kind === "number" ? Number(value) : value;
  }
  return content;
}
