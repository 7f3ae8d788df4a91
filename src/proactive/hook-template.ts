/**
 * Fills a hook's `ask` template from the delivery's body: `{{ body.pipeline }}` is
 * that field (a dotted path; `body.items.0.id` indexes an array), `{{ body }}` the
 * whole body. Strings are inserted as they are, other values as JSON, a missing
 * field as nothing. Without a template the question is the body itself, verbatim.
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
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}
