interface Prop {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  const?: unknown;
  minimum?: number;
}

/**
 * Arguments a check can pass to a tool without knowing it: each required property
 * gets its default, const, first enum value, or a plain sample of its type.
 * Undefined when a required property cannot be sampled (an object or an unknown type).
 */
export function sampleArguments(inputSchema: Record<string, unknown>): Record<string, unknown> | undefined {
  const props = (inputSchema.properties ?? {}) as Record<string, Prop>;
  const required = Array.isArray(inputSchema.required) ? (inputSchema.required as string[]) : [];
  const args: Record<string, unknown> = {};
  for (const name of required) {
    const value = sample(props[name] ?? {});
    if (value === undefined) return undefined;
    args[name] = value;
  }
  return args;
}

function sample(prop: Prop): unknown {
  if (prop.default !== undefined) return prop.default;
  if (prop.const !== undefined) return prop.const;
  if (Array.isArray(prop.enum) && prop.enum.length > 0) return prop.enum[0];
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== "null") : prop.type;
  switch (type) {
    case "string":
      return "roomgate check";
    case "number":
    case "integer":
      return prop.minimum ?? 1;
    case "boolean":
      return false;
    case "array":
      return [];
    default:
      return undefined;
  }
}
