import { formatPath, issueAt, type ConfigIssue } from "./config-issues.js";

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}$/;

/**
 * Replaces `${VAR}` (and `${VAR:-default}`) in every string of a parsed YAML tree
 * from the environment. A value that is exactly one reference and expands to an
 * integer or `true`/`false` becomes that number or boolean, so ports and user ids
/** What expanding saw, by the path of each value (as `formatPath` writes it). */
export interface EnvUse {
  /** Values a set variable filled: where secrets come from. */
  fromEnv: Set<string>;
  /** Values that are one reference to a variable set but empty (`TOKEN=` in a .env), with its name. */
  empty: Map<string, string>;
}

/**
 * Replaces `${VAR}` (and `${VAR:-default}`) in every string of a parsed YAML tree
 * from the environment. A value that is exactly one reference and expands to an
 * integer or `true`/`false` becomes that number or boolean, so ports and user ids
 * can come from the environment too. Unset variables are collected in `issues`;
 * `use` learns which values came from the environment and which from an empty one.
 */
export function expandEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  issues: ConfigIssue[] = [],
  path: PropertyKey[] = [],
  use: EnvUse = { fromEnv: new Set(), empty: new Map() },
): unknown {
  if (typeof value === "string") {
    let missing = false;
    const expanded = value.replace(REFERENCE, (whole, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== "") {
        use.fromEnv.add(formatPath(path));
        return v;
      }
      if (fallback !== undefined) return fallback;
      if (v === "") {
        if (WHOLE_REFERENCE.test(value)) use.empty.set(formatPath(path), name);
        return v;
      }
      issues.push(issueAt(path, `environment variable ${name} is not set`));
      missing = true;
      return whole;
    });
    if (missing || !WHOLE_REFERENCE.test(value)) return expanded;
    if (/^-?\d+$/.test(expanded)) return Number(expanded);
    if (expanded === "true" || expanded === "false") return expanded === "true";
    return expanded;
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, issues, [...path, i], use));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, expandEnv(v, env, issues, [...path, k], use)]),
    );
  }
  return value;
}
