import type { ValidateFunction } from "ajv";
import { SchemaDialects } from "../core/schema-dialects.js";
import { coerceArgument } from "./arguments.js";
import { literal, typeText } from "./schema-text.js";
import { validationProblem } from "./validation-text.js";

/** One field of an elicitation form as the room asks it. */
export interface FormField {
  name: string;
  title: string;
  description?: string;
  required: boolean;
  /** `choice`: one of `values` (buttons); `multi`: several of `values`; `boolean`: Yes/No; `value`: typed. */
  kind: "choice" | "multi" | "boolean" | "value";
  type: string;
  values: { value: unknown; label: string }[];
  defaultValue?: unknown;
  schema: Record<string, unknown>;
}

interface Prop {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: { const?: unknown; title?: string }[];
  anyOf?: { const?: unknown; title?: string }[];
  items?: Prop;
  default?: unknown;
}

function choices(p: Prop): { value: unknown; label: string }[] {
  if (Array.isArray(p.enum))
    return p.enum.map((v, i) => ({ value: v, label: p.enumNames?.[i] ?? String(v) }));
  const alternatives = p.oneOf ?? p.anyOf;
  if (Array.isArray(alternatives) && alternatives.every((a) => a.const !== undefined)) {
    return alternatives.map((a) => ({ value: a.const, label: a.title ?? String(a.const) }));
  }
  return [];
}

/** Reads a form's requested schema (flat, primitive fields as MCP allows) into the fields to ask, in order. */
export function formFields(requestedSchema: Record<string, unknown>): FormField[] {
  const props = (requestedSchema.properties ?? {}) as Record<string, Prop>;
  const required = new Set(
    Array.isArray(requestedSchema.required) ? (requestedSchema.required as string[]) : [],
  );
  return Object.entries(props).map(([name, p]) => {
    const own = choices(p);
    const items = p.type === "array" && p.items ? choices(p.items) : [];
    const kind =
      own.length > 0 ? "choice" : items.length > 0 ? "multi" : p.type === "boolean" ? "boolean" : "value";
    return {
      name,
      title: p.title ?? name,
      description: p.description,
      required: required.has(name),
      kind,
      type: typeText(p),
      values: kind === "multi" ? items : own,
      defaultValue: p.default,
      schema: p as Record<string, unknown>,
    };
  });
}

/** The question for one field: its title, description, what to send, and its default. */
export function fieldQuestion(field: FormField, index: number, count: number): string {
  const head = `(${index + 1}/${count}) ${field.title}${field.required ? "" : " (optional)"}`;
  const how = {
    choice: "Choose one.",
    multi: "Choose one, or send several numbers or names separated by commas.",
    boolean: "Yes or No?",
    value: `Send it as your next message (${field.type}).`,
  }[field.kind];
  const lines = [head];
  if (field.description) lines.push(field.description);
  lines.push(how);
  if (field.defaultValue !== undefined) lines.push(`Default: ${literal(field.defaultValue)}`);
  return lines.join("\n");
}

const ajv = new SchemaDialects({ strict: false, allErrors: true, logger: false }, (each) => {
  // The string formats MCP allows in a requested schema, checked as a person would expect.
  each.addFormat("email", /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  each.addFormat("uri", (s: string) => URL.canParse(s) && /^[a-z][a-z0-9+.-]*:/i.test(s));
  each.addFormat("date", (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)));
  each.addFormat("date-time", (s: string) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)));
});
const validators = new WeakMap<object, ValidateFunction>();

/** Checks a value against a schema; a readable problem, or undefined when it holds. */
export function checkValue(schema: Record<string, unknown>, value: unknown): string | undefined {
  let validate = validators.get(schema);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
    } catch {
      return undefined;
    }
    validators.set(schema, validate);
  }
  return validate(value) ? undefined : validationProblem(validate.errors ?? []).replace(/^arguments /, "it ");
}

/** A typed answer for a field as a value of its type, or undefined when it cannot be one. */
export function typedValue(field: FormField, text: string): unknown {
  const t = text.trim();
  const pick = (word: string) => {
    const n = /^\d+$/.test(word) ? Number(word) : NaN;
    const byNumber = Number.isInteger(n) ? field.values[n - 1] : undefined;
    const byName = field.values.find(
      (v) =>
        v.label.toLowerCase() === word.toLowerCase() || String(v.value).toLowerCase() === word.toLowerCase(),
    );
    return (byNumber ?? byName)?.value;
  };
  switch (field.kind) {
    case "choice":
      return pick(t);
    case "multi": {
      const picked = t.split(/\s*,\s*/).map(pick);
      return picked.every((v) => v !== undefined) ? picked : undefined;
    }
    case "boolean": {
      const c = coerceArgument(t, "boolean");
      return c.ok ? c.value : undefined;
    }
    default: {
      const c = coerceArgument(
        t,
        field.type === "number" || field.type === "integer" ? field.type : "string",
      );
      return c.ok ? c.value : undefined;
    }
  }
}
