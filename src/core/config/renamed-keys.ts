import { issueAt, type ConfigIssue } from "../config-issues.js";

/**
 * Keys renamed when the configuration took one unit for durations (seconds, like
 * `leaseSeconds` and `idleSeconds`); the old millisecond keys are read, converted and
 * warned about for one release (CHANGELOG.md, 0.2.0).
 */
export const RENAMED_TO_SECONDS = {
  namespace: {
    timeoutMs: "timeoutSeconds",
    elicitTimeoutMs: "elicitTimeoutSeconds",
    startTimeoutMs: "startTimeoutSeconds",
  },
  limits: { fileTimeoutMs: "fileTimeoutSeconds" },
  queue: { typingAfterMs: "typingAfterSeconds" },
} as const satisfies Record<string, Record<string, string>>;

type Renames = Readonly<Record<string, string>>;

function isTree(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A section with its old millisecond keys read as the new seconds keys (a section that
 * gives both keeps the old one, which the strict schema then refuses as unknown).
 */
export function fromMilliseconds(renames: Renames): (section: unknown) => unknown {
  return (section) => {
    if (!isTree(section)) return section;
    const out = { ...section };
    for (const [old, now] of Object.entries(renames)) {
      if (!(old in out) || now in out || typeof out[old] !== "number") continue;
      out[now] = (out[old] as number) / 1000;
      delete out[old];
    }
    return out;
  };
}

/** One warning per old key in the file, naming the new key and the value in seconds. */
export function renamedKeyWarnings(raw: unknown): ConfigIssue[] {
  const root = isTree(raw) ? raw : {};
  const warnings: ConfigIssue[] = [];
  const check = (section: unknown, path: string[], renames: Renames) => {
    if (!isTree(section)) return;
    for (const [old, now] of Object.entries(renames)) {
      if (!(old in section)) continue;
      const value = section[old];
      const seconds = typeof value === "number" ? ` (${value} ms is ${value / 1000})` : "";
      warnings.push(
        issueAt(
          [...path, old],
          `renamed to "${now}", in seconds${seconds}; the old key is read until the next release`,
        ),
      );
    }
  };
  if (isTree(root.namespaces)) {
    for (const [name, ns] of Object.entries(root.namespaces)) {
      check(ns, ["namespaces", name], RENAMED_TO_SECONDS.namespace);
    }
  }
  check(root.limits, ["limits"], RENAMED_TO_SECONDS.limits);
  check(root.queue, ["queue"], RENAMED_TO_SECONDS.queue);
  return warnings;
}
