/** A parsed chat command: name without the slash, the raw rest of the line. */
export interface ParsedCommand {
  name: string;
  rest: string;
}

/** Splits `/name rest…` (a bot mention like `/tools@feedbot` is stripped by the adapter). */
export function parseCommand(text: string): ParsedCommand | undefined {
  const match = /^\/([A-Za-z][A-Za-z0-9_]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: match[1]!.toLowerCase(), rest: (match[2] ?? "").trim() };
}

/** Arguments of `/call`: the tool, then a JSON object or `key=value` pairs (values may be quoted). */
export type CallArguments =
  | { ok: true; tool: string; json?: Record<string, unknown>; pairs?: Record<string, string> }
  | { ok: false; problem: string };

/** Parses the rest of a `/call` line. */
export function parseCallArguments(rest: string): CallArguments {
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(rest.trim());
  if (!match) return { ok: false, problem: "Usage: /call <tool> {json} or /call <tool> key=value …" };
  const tool = match[1]!;
  const body = (match[2] ?? "").trim();
  if (body === "") return { ok: true, tool, pairs: {} };
  if (body.startsWith("{")) {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch (err) {
      return { ok: false, problem: `The arguments are not valid JSON (${(err as Error).message}).` };
    }
    if (json === null || typeof json !== "object" || Array.isArray(json)) {
      return { ok: false, problem: 'The arguments must be a JSON object, like {"query": "text"}.' };
    }
    return { ok: true, tool, json: json as Record<string, unknown> };
  }
  const pairs: Record<string, string> = {};
  const re = /([A-Za-z_][A-Za-z0-9_]*)=(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))/gy;
  let pos = 0;
  while (pos < body.length) {
    while (body[pos] === " " || body[pos] === "\t" || body[pos] === "\n") pos += 1;
    if (pos >= body.length) break;
    re.lastIndex = pos;
    const m = re.exec(body);
    if (!m) {
      return {
        ok: false,
        problem: `Could not read "${body.slice(pos, pos + 30)}": write key=value, quoting values with spaces.`,
      };
    }
    pairs[m[1]!] = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : (m[3] ?? m[4] ?? "");
    pos = re.lastIndex;
  }
  return { ok: true, tool, pairs };
}
