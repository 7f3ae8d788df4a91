import { pino, type Logger } from "pino";

export type { Logger };

/**
 * Creates the JSON logger. Secrets never reach it: known secret fields are redacted
 * and any configured secret value that still appears is masked by `scrubSecrets`.
 * Errors keep their `cause` chain and, for validation errors, their `issues`.
 */
export function createLogger(options: { level?: string; name?: string; destination?: number } = {}): Logger {
  return pino(
    {
      name: options.name ?? "roomgate",
      level: options.level ?? process.env.LOG_LEVEL ?? "info",
      redact: {
        paths: [
          "token",
          "*.token",
          "accessToken",
          "*.accessToken",
          "headers.Authorization",
          "*.headers.Authorization",
          "secretToken",
          "*.secretToken",
        ],
        censor: "[secret]",
      },
      serializers: { err: (value: unknown) => (value instanceof Error ? serializeError(value) : value) },
      formatters: {
        log: (object) => scrubDeep(object) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((a) => (typeof a === "string" ? scrubSecrets(a) : a)) as Parameters<typeof method>,
          );
        },
      },
    },
    pino.destination(options.destination ?? 2),
  );
}

const secrets = new Set<string>();
/** The registered secrets, longest first, so a secret that contains another is masked whole. */
let ordered: string[] = [];

/**
 * Registers a secret value (a token, a password, a hook secret) so that it is masked
 * wherever it appears, however short: masking goes by value, never by length.
 */
export function registerSecret(value: string | undefined): void {
  if (!value || secrets.has(value)) return;
  secrets.add(value);
  ordered = [...secrets].sort((a, b) => b.length - a.length);
}

/** Masks every registered secret in a string (a token inside a URL in an error message, say). */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const s of ordered) if (out.includes(s)) out = out.split(s).join("[secret]");
  return out;
}

/**
 * Masks registered secrets in every string of a value (errors made plain first), for
 * anything about to be encoded: masking before JSON escapes a `"` or `\` in a secret,
 * so an encoded copy never escapes the mask.
 */
export function maskSecrets(value: unknown): unknown {
  return scrubDeep(value);
}

/** Most causes followed, and most validation issues kept, per logged error. */
const ERROR_DEPTH = 5;
const MAX_ISSUES = 20;

/**
 * An error as a plain object for the log: its class, message, stack and own fields, the
 * issues of a validation error (zod keeps them non-enumerable) and its `cause`, recursively.
 */
export function serializeError(err: Error, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(err as unknown as Record<string, unknown>) };
  out.type = err.constructor?.name && err.constructor.name !== "Object" ? err.constructor.name : err.name;
  out.message = err.message;
  out.stack = err.stack;
  const issues = (err as { issues?: unknown }).issues;
  if (Array.isArray(issues)) out.issues = issues.slice(0, MAX_ISSUES);
  const cause = err.cause;
  if (cause !== undefined) {
    out.cause = cause instanceof Error && depth < ERROR_DEPTH ? serializeError(cause, depth + 1) : cause;
  }
  return out;
}

/** Masks registered secrets in every string of a log record, errors' messages, stacks and causes included. */
function scrubDeep(value: unknown, depth = 0): unknown {
  if (depth > 12) return value;
  // Errors are made plain here, before pino's serializers run, so nothing of them is lost.
  if (value instanceof Error) return scrubDeep(serializeError(value), depth + 1);
  if (typeof value === "string") return scrubSecrets(value);
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubDeep(v, depth + 1)]));
  }
  return value;
}

const LEVELS = new Set(["fatal", "error", "warn", "info", "debug", "trace"]);
const discard = () => undefined;

/**
 * A child logger built on first use: a turn names its room and id on every line it
 * logs, but an ordinary turn logs nothing at the default level, and building a pino
 * child (its bindings serialized and redacted) each turn cost more than the turn's
 * own metrics. A call at a level that is off is dropped without building it.
 */
export function lazyChild(base: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  return new Proxy(base, {
    get(target, prop) {
      if (typeof prop === "string" && LEVELS.has(prop) && !target.isLevelEnabled(prop)) return discard;
      child ??= target.child(bindings);
      const value: unknown = Reflect.get(child, prop, child);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(child) : value;
    },
  });
}

/** A logger that discards everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
