import { pino, type Logger } from "pino";

export type { Logger };

/**
 * Creates the JSON logger. Secrets never reach it: known secret fields are redacted
 * and any configured secret value that still appears is masked by `scrubSecrets`.
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

/** Registers a secret value (bot token, access token) so that it is masked in log text. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 8) secrets.add(value);
}

/** Masks every registered secret in a string (a token inside a URL in an error message, say). */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join("[secret]");
  return out;
}

/** Masks registered secrets in every string of a log record, errors' messages and stacks included. */
function scrubDeep(value: unknown, depth = 0): unknown {
  if (secrets.size === 0 || depth > 6) return value;
  if (typeof value === "string") return scrubSecrets(value);
  if (value instanceof Error) {
    return { type: value.name, message: scrubSecrets(value.message), stack: scrubSecrets(value.stack ?? "") };
  }
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubDeep(v, depth + 1)]));
  }
  return value;
}

/** A logger that discards everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
