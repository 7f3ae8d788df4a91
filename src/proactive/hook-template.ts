/** Deepest JSON value a template inserts: deeper ones are refused (422), not stringified. */
export const MAX_TEMPLATE_DEPTH = 64;

/** A templated field of a delivery's body is nested deeper than MAX_TEMPLATE_DEPTH. */
export class HookTemplateTooDeepError extends Error {
  constructor(readonly path: string) {
    super(`body${path} is nested deeper than ${MAX_TEMPLATE_DEPTH} levels`);
    this.name = "HookTemplateTooDeepError";
  }
}

/**
 * Fills a hook's `ask` template from the delivery's body: `{{ body.pipeline }}` is
 * that field (a dotted path; `body.items.0.id` indexes an array), `{{ body }}` the
 * whole body. Strings are inserted as they are, other values as JSON, a missing
 * field as nothing. Without a template the question is the body itself, verbatim.
 * A field nested deeper than MAX_TEMPLATE_DEPTH throws HookTemplateTooDeepError: the
 * sender decides the depth, and turning it into JSON would overflow the stack.
 */
export function renderHookAsk(template: string | undefined, raw: string): string {
  if (template === undefined) return raw;
  let body: unknown = raw;
  try {
    body = JSON.parse(raw);
  } catch {
    // A body that is not JSON is still `{{ body }}`; its fields are all missing.
  }
  return template.replace(/\{\{\s*body((?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g, (_, path: string) => {
    if (path === "") return raw;
    let value: unknown = body;
    for (const part of path.slice(1).split(".")) {
      if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) return "";
      value = (value as Record<string, unknown>)[part];
    }
    if (value === undefined || value === null) return "";
    if (typeof value === "string") return value;
    if (deeperThan(value, MAX_TEMPLATE_DEPTH)) throw new HookTemplateTooDeepError(path);
    return JSON.stringify(value);
  });
}

/** Whether a parsed JSON value nests more than `max` levels, found without recursion. */
function deeperThan(value: unknown, max: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth >= max) return true;
    for (const child of Object.values(v)) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
