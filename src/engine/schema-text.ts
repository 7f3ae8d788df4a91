/** A JSON Schema node as `/describe` reads it; anything else in it is ignored. */
interface SchemaNode {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  items?: SchemaNode | SchemaNode[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  $ref?: string;
}

const MAX_DEPTH = 4;

function node(value: unknown): SchemaNode {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as SchemaNode) : {};
}

/** A value as it would be typed in `/call` JSON: strings quoted, the rest as JSON. */
export function literal(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** The type of a schema node in words: `string`, `array of number`, `object`, `string | number`. */
export function typeText(raw: unknown, depth = 0): string {
  const n = node(raw);
  const alternatives = n.anyOf ?? n.oneOf;
  if (alternatives && depth < MAX_DEPTH) {
    const types = [...new Set(alternatives.map((a) => typeText(a, depth + 1)).filter((t) => t !== "null"))];
    return types.join(" | ") || "any";
  }
  const types = (Array.isArray(n.type) ? n.type : n.type ? [n.type] : []).filter((t) => t !== "null");
  if (types.length === 0) return n.enum ? "enum" : n.properties ? "object" : "any";
  return types
    .map((t) => {
      if (t !== "array") return t;
      const items = Array.isArray(n.items) ? n.items[0] : n.items;
      return items && depth < MAX_DEPTH ? `array of ${typeText(items, depth + 1)}` : "array";
    })
    .join(" | ");
}

function facts(n: SchemaNode): string[] {
  const out: string[] = [];
  if (n.enum) out.push(`one of ${n.enum.map(literal).join(", ")}`);
  if (n.const !== undefined) out.push(`always ${literal(n.const)}`);
  if (n.default !== undefined) out.push(`default ${literal(n.default)}`);
  if (n.minimum !== undefined && n.maximum !== undefined) out.push(`${n.minimum}–${n.maximum}`);
  else if (n.minimum !== undefined) out.push(`at least ${n.minimum}`);
  else if (n.maximum !== undefined) out.push(`at most ${n.maximum}`);
  if (n.format) out.push(`format ${n.format}`);
  const items = node(Array.isArray(n.items) ? n.items[0] : n.items);
  if (items.enum) out.push(`items one of ${items.enum.map(literal).join(", ")}`);
  return out;
}

function objectLines(schema: SchemaNode, indent: string, depth: number): string[] {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const lines: string[] = [];
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    const n = node(raw);
    const head = [typeText(n), required.has(name) ? "required" : "optional", ...facts(n)].join(", ");
    lines.push(`${indent}• ${name} (${head})${n.description ? `: ${n.description}` : ""}`);
    if (depth >= MAX_DEPTH) continue;
    const items = node(Array.isArray(n.items) ? n.items[0] : n.items);
    if (n.properties) lines.push(...objectLines(n, `${indent}    `, depth + 1));
    else if (items.properties) lines.push(...objectLines(items, `${indent}    `, depth + 1));
  }
  return lines;
}

/**
 * One line per argument of an input schema: name, type (array item types
 * included), required or optional, allowed values, default, range; the fields of
 * nested objects (and of arrays of objects) indented under their parent.
 */
export function describeSchema(inputSchema: Record<string, unknown>): string[] {
  return objectLines(node(inputSchema), "", 0);
}
