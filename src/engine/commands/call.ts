import { scopeRefusalsTotal } from "../../ops/metrics.js";
import { coerceKeyValues, IDENTITY_ARGUMENTS } from "../arguments.js";
import { say } from "../changes.js";
import { callByAddress } from "../discovery.js";
import { texts } from "../texts.js";
import { checkedCall, runTool } from "../tool-runner.js";
import type { Command, Parsed } from "./command.js";

/** What `/call` names: the tool, then a JSON object or `key=value` pairs (values may be quoted). */
export interface CallArguments {
  tool: string;
  json?: Record<string, unknown>;
  pairs?: Record<string, string>;
}

/**
 * `/call tool key=value …` or `/call tool {json}` (DESIGN §5): explicit arguments,
 * except those the bot fills from who and where the person is. Tools past the
 * router: the binding's callers only.
 */
export const call: Command<CallArguments> = {
  name: "call",
  description: "Call a tool with explicit arguments: /call tool key=value… or {json}",
  menu: true,
  who: "caller",
  parse: parseCallArguments,
  async run(turn, parsed) {
    const given = parsed.json ?? parsed.pairs ?? {};
    const identity = Object.keys(given).filter((name) => IDENTITY_ARGUMENTS.includes(name));
    if (identity.length > 0) return [say(texts.identityArgument(parsed.tool, identity))];
    const tool = (await turn.namespace.tools()).find((t) => t.name === parsed.tool);
    if (!tool) {
      // Not a listed tool: an address, when the namespace is found by address.
      const byAddress = await callByAddress(turn, parsed.tool, given, checkedCall(turn));
      if (byAddress) return byAddress;
      scopeRefusalsTotal.inc({ namespace: turn.namespace.name, reason: "not_in_namespace" });
      return [say(texts.notInNamespace(parsed.tool, turn.namespace.name))];
    }
    let explicit = parsed.json;
    if (!explicit) {
      const coerced = coerceKeyValues(tool.inputSchema, parsed.pairs ?? {});
      if (coerced.bad) return [say(texts.invalidArguments(tool.name, coerced.bad))];
      explicit = coerced.args;
    }
    return runTool(turn, tool.name, { explicit });
  },
};

/** Reads the rest of a `/call` line. */
export function parseCallArguments(rest: string): Parsed<CallArguments> {
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(rest.trim());
  if (!match) return { ok: false, problem: "Usage: /call <tool> {json} or /call <tool> key=value …" };
  const tool = match[1]!;
  const body = (match[2] ?? "").trim();
  if (body === "") return { ok: true, args: { tool, pairs: {} } };
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
    return { ok: true, args: { tool, json: json as Record<string, unknown> } };
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
  return { ok: true, args: { tool, pairs } };
}
