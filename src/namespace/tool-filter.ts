import type { NamespaceConfig } from "../core/config.js";
import type { ToolInfo } from "./tool-info.js";

/** Compiles a name pattern (`*` any run of characters, `?` one character) to an anchored RegExp. */
export function globToRegExp(pattern: string): RegExp {
  const body = [...pattern]
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`);
}

/** True when `name` matches one of the glob patterns. */
export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => globToRegExp(p).test(name));
}

/** What a namespace keeps of a server's tool list, and what it left out. */
export interface FilteredTools {
  tools: ToolInfo[];
  /** How many tools the server listed in all, before the prefix and the binding's patterns. */
  listed: number;
  /** How many of them carry the namespace's prefix. */
  prefixed: number;
  /** Names the server listed outside the prefix (a few, for reports). */
  foreign: string[];
}

/**
 * Keeps the tools that exist for a room of the namespace (DESIGN §6): under its
 * prefix, matching `tools.allow` when given, and matching no `tools.deny` pattern.
 * Patterns match the full tool name, so they are written the way `/tools` shows names.
 */
export function filterTools(all: ToolInfo[], prefix: string, rules: NamespaceConfig["tools"]): FilteredTools {
  const prefixed = all.filter((t) => t.name.startsWith(prefix));
  const tools = prefixed.filter(
    (t) => (rules.allow === undefined || matchesAny(t.name, rules.allow)) && !matchesAny(t.name, rules.deny),
  );
  const foreign = all.filter((t) => !t.name.startsWith(prefix)).map((t) => t.name);
  return { tools, listed: all.length, prefixed: prefixed.length, foreign: foreign.slice(0, 10) };
}
