import type { NamespaceConfig } from "../core/config.js";
import type { ToolInfo } from "./tool-info.js";

/** A compiled name pattern: true when the whole name matches. */
export type NameMatcher = (name: string) => boolean;

/** True when `text` at `at` matches `segment`, where `?` stands for any one character. */
function segmentAt(text: string, at: number, segment: string): boolean {
  for (let i = 0; i < segment.length; i++) {
    if (segment[i] !== "?" && segment[i] !== text[at + i]) return false;
  }
  return true;
}

/**
 * Compiles a name pattern (`*` any run of characters, `?` one character) to a matcher
 * whose time is linear in the name's length for a given pattern: the parts between
 * stars are matched left to right at their earliest place, which is enough for a
 * glob (a later place never helps), so nothing is ever backtracked into. A regular
 * expression with one `.*` per star backtracks polynomially on hostile names.
 */
export function compileGlob(pattern: string): NameMatcher {
  const parts = pattern.split("*");
  if (parts.length === 1) {
    return (name) => name.length === pattern.length && segmentAt(name, 0, pattern);
  }
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1).filter((p) => p !== "");
  const fixed = first.length + last.length;
  return (name) => {
    if (name.length < fixed) return false;
    if (!segmentAt(name, 0, first) || !segmentAt(name, name.length - last.length, last)) return false;
    let at = first.length;
    const end = name.length - last.length;
    for (const part of middle) {
      let found = -1;
      for (let i = at; i + part.length <= end; i++) {
        if (segmentAt(name, i, part)) {
          found = i;
          break;
        }
      }
      if (found === -1) return false;
      at = found + part.length;
    }
    return true;
  };
}

const compiled = new Map<string, NameMatcher>();

/** True when `name` matches one of the glob patterns (each compiled once). */
export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => {
    let matcher = compiled.get(p);
    if (!matcher) {
      matcher = compileGlob(p);
      compiled.set(p, matcher);
    }
    return matcher(name);
  });
}

/** True when the binding's `tools.allow` / `tools.deny` let a tool (or a discovery address) exist for the room. */
export function permitted(name: string, rules: NamespaceConfig["tools"]): boolean {
  return (rules.allow === undefined || matchesAny(name, rules.allow)) && !matchesAny(name, rules.deny);
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
  const tools = prefixed.filter((t) => permitted(t.name, rules));
  const foreign = all.filter((t) => !t.name.startsWith(prefix)).map((t) => t.name);
  return { tools, listed: all.length, prefixed: prefixed.length, foreign: foreign.slice(0, 10) };
}
