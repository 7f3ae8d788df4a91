import { readFileSync } from "node:fs";
import { z } from "zod";
import { LineCounter, parseDocument } from "yaml";
import { checkAcrossFields } from "./config-checks.js";
import { expandEnv } from "./config-env.js";
import { fromZodIssues, issueLine, type ConfigIssue } from "./config-issues.js";
import { placeIssues } from "./config-lines.js";
import { ConfigError } from "./errors.js";
import { TELEGRAM_TOKEN } from "./telegram-token.js";

// Every section is a strict object: an unknown key is an error with a "did you mean"
// (config-issues.ts finds the known keys by walking these schemas). To add a key,
// add it to its section's schema with a default; nothing else needs to change.

/** Which tools of a namespace a binding shows (`allow`/`deny` globs) and runs without asking (`trust`). */
export const NamespaceToolsSchema = z
  .strictObject({
    /** Only tools matching one of these patterns exist for the room; default: all. */
    allow: z.array(z.string().min(1)).optional(),
    /** Tools matching one of these patterns do not exist for the room. */
    deny: z.array(z.string().min(1)).default([]),
    /** Destructive tools matching one of these patterns run without an approval. */
    trust: z.array(z.string().min(1)).default([]),
    /** Tools matching one of these patterns ask for an approval even when MCP does not mark them destructive. */
    confirm: z.array(z.string().min(1)).default([]),
  })
  .default({ deny: [], trust: [], confirm: [] });

/** Names of a namespace's own discovery tools (DESIGN: discovery by address). */
export const DiscoverySchema = z.strictObject({
  search: z.string().min(1),
  describe: z.string().min(1).optional(),
  call: z.string().min(1),
});

/** One namespace: a stdio command or a Streamable HTTP url (DESIGN §10). */
export const NamespaceConfigSchema = z
  .strictObject({
    command: z.array(z.string()).min(1).optional(),
    cwd: z.string().optional(),
    env: z.record(z.string(), z.string()).default({}),
    url: z.url().optional(),
    headers: z.record(z.string(), z.string()).default({}),
    /** Tool-name prefix of the namespace; default `<name>.`, `""` means the whole server. */
    prefix: z.string().optional(),
    /** The router's tool name; default `<prefix>ask`; `false` = the namespace has no router. */
    ask: z.union([z.string().min(1), z.literal(false)]).optional(),
    tools: NamespaceToolsSchema,
    /** The namespace's own discovery tools (search / describe / call by address), when it has them. */
    discovery: DiscoverySchema.optional(),
    /** Per-call timeout in milliseconds. */
    timeoutMs: z.number().int().positive().default(30_000),
    /** How long a question the server asks in the room (elicitation) waits for an answer, in milliseconds. */
    elicitTimeoutMs: z.number().int().positive().default(300_000),
    /** How long the server may take to start and answer `initialize`, in milliseconds. */
    startTimeoutMs: z.number().int().positive().default(30_000),
  })
  .refine((ns) => (ns.command === undefined) !== (ns.url === undefined), {
    message: "a namespace needs exactly one of `command` (stdio) or `url` (Streamable HTTP)",
  });
export type NamespaceConfig = z.infer<typeof NamespaceConfigSchema>;

/** Which messages of a group room reach the namespace: addressed ones (`mentions`, the default when unset) or all. */
const RespondSchema = z.enum(["mentions", "all"]).optional();

const TelegramGroupSchema = z.strictObject({
  chat: z.number().int(),
  users: z.array(z.number().int()).default([]),
  /** `mentions`: only commands, mentions of the bot and replies to it; `all`: every message. */
  respond: RespondSchema,
});

const TelegramBotSchema = z.strictObject({
  token: z
    .string()
    .regex(TELEGRAM_TOKEN, "a Telegram bot token looks like <bot id>:<secret> (from BotFather)"),
  namespace: z.string().min(1),
  /** Allowed user ids for direct messages. */
  users: z.array(z.number().int()).default([]),
  /** Groups are closed unless listed, each with its own sender allowlist. */
  groups: z.array(TelegramGroupSchema).default([]),
});

const TelegramWebhookSchema = z.strictObject({
  /** Public base URL Telegram posts to (behind a TLS proxy); each bot's webhook is `<url>/<bot id>`. */
  url: z.url(),
  port: z.number().int().positive().default(8443),
  /** Address the plain-HTTP listener binds; loopback unless a proxy elsewhere must reach it. */
  host: z.string().default("127.0.0.1"),
  /** The path the listener serves (`<path>/<bot id>`) when a proxy rewrites it; default: the url's path. */
  path: z
    .string()
    .regex(/^\/[^?#]*$/, 'a path like "/telegram"')
    .optional(),
  /** Telegram's X-Telegram-Bot-Api-Secret-Token: 16 to 256 characters of A-Z, a-z, 0-9, _ and -. */
  secretToken: z
    .string()
    .min(16, "at least 16 characters, so that it cannot be guessed (e.g. `openssl rand -hex 32`)")
    .max(256, "at most 256 characters (Telegram's limit)")
    .regex(/^[A-Za-z0-9_-]+$/, "only A-Z, a-z, 0-9, _ and - (Telegram's rule)"),
});

const TelegramSchema = z.strictObject({
  apiRoot: z.url().optional(),
  mode: z.enum(["polling", "webhook"]).default("polling"),
  webhook: TelegramWebhookSchema.optional(),
  bots: z.array(TelegramBotSchema).default([]),
  /** Send limits shared by all processes (a self-hosted Bot API or paid broadcasts allow more). */
  limits: z
    .strictObject({
      botPerSecond: z.number().positive().default(30),
      chatPerSecond: z.number().positive().default(1),
      groupPerMinute: z.number().positive().default(20),
    })
    .default({ botPerSecond: 30, chatPerSecond: 1, groupPerMinute: 20 }),
});

const MatrixRoomSchema = z.strictObject({
  room: z
    .string()
    .regex(
      /^![^:]+:.+$/,
      'must be a room id like "!abc:example.org" (an alias is not enough; Element shows the id under Room settings → Advanced)',
    ),
  namespace: z.string().min(1),
  users: z
    .array(z.string().regex(/^@[^:]+:.+$/, 'a Matrix user id looks like "@alice:example.org"'))
    .default([]),
  /** Users at or above this power level are allowed too. */
  powerLevel: z.number().int().optional(),
  /** `mentions`: only mentions of the bot, replies to it and commands; `all`: every message. */
  respond: RespondSchema,
});

const MatrixSchema = z.strictObject({
  homeserver: z.url(),
  accessToken: z.string().min(1),
  /** Users whose invites to a configured room are accepted; default: the room's users. */
  inviters: z.array(z.string()).default([]),
  rooms: z.array(MatrixRoomSchema).default([]),
});

const RedisSchema = z.strictObject({
  url: z.string().optional(),
  prefix: z.string().min(1).default("rg"),
  /** Run on an external Redis without persistence, accepting that a restart loses queued turns. */
  volatile: z.boolean().default(false),
});

const SessionsSchema = z.strictObject({
  idleSeconds: z
    .number()
    .int()
    .positive()
    .default(7 * 24 * 3600),
  historyTurns: z.number().int().positive().default(20),
  choiceSeconds: z
    .number()
    .int()
    .positive()
    .default(24 * 3600),
  /** How long a tool waits for a missing argument (slot filling) before it expires. */
  slotSeconds: z
    .number()
    .int()
    .positive()
    .default(15 * 60),
});

const LimitsSchema = z.strictObject({
  /** Largest inbound message accepted, in characters. */
  maxMessageChars: z.number().int().positive().default(16_000),
  /** Largest text file accepted as an argument, in bytes. */
  maxFileBytes: z.number().int().positive().default(1_000_000),
  /** Longest a file download may take, in milliseconds. */
  fileTimeoutMs: z.number().int().positive().default(20_000),
  /** Most turns one person may start per minute; the excess gets one notice and is not queued. */
  turnsPerMinute: z.number().int().positive().default(20),
  /** Most events waiting in one room's queue; the excess gets one notice and is not queued. */
  roomQueueCap: z.number().int().positive().default(50),
  /** Largest namespace reply read (any MCP message, stdio or HTTP), in bytes; a larger one fails its call unread. */
  maxToolResultBytes: z.number().int().positive().default(20_000_000),
});

/** What happens when a person edits a message they sent (Telegram edited_message, Matrix m.replace). */
const EditsSchema = z.strictObject({
  /** Ask again with the edited text; off by default, when edits are only logged. */
  reask: z.boolean().default(false),
  /** Only edits made within this many seconds of the original message are asked again. */
  windowSeconds: z.number().int().positive().default(120),
});

const WorkerSchema = z.strictObject({ concurrency: z.number().int().positive().default(8) });

const QueueSchema = z.strictObject({
  /** A dead worker's rooms are taken over this long after its last lease renewal. */
  leaseSeconds: z.number().positive().default(10),
  /** A turn still undeliverable this long after its first wait goes to the dead letters. */
  deliveryDeadlineSeconds: z.number().positive().default(3600),
  /** The longest sleep between delivery retries (backoff doubles from 0.5 s up to this, jittered). */
  retryMaxSeconds: z.number().positive().default(10),
  /** How long a platform event id is remembered, so a redelivered event is not answered twice. */
  dedupeSeconds: z
    .number()
    .int()
    .positive()
    .default(6 * 3600),
  /** Typing is shown only for turns that run longer than this. */
  typingAfterMs: z.number().int().nonnegative().default(1000),
});

const ShutdownSchema = z.strictObject({ graceSeconds: z.number().nonnegative().default(10) });

const HttpSchema = z.strictObject({
  port: z.number().int().nonnegative().default(9464),
  host: z.string().default("127.0.0.1"),
});

/** The YAML configuration file (DESIGN §10), validated at load; types derive from it. */
export const ConfigSchema = z.strictObject({
  redis: RedisSchema.default({ prefix: "rg", volatile: false }),
  namespaces: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), NamespaceConfigSchema).default({}),
  sessions: SessionsSchema.default({
    idleSeconds: 7 * 24 * 3600,
    historyTurns: 20,
    choiceSeconds: 24 * 3600,
    slotSeconds: 15 * 60,
  }),
  limits: LimitsSchema.default({
    maxMessageChars: 16_000,
    maxFileBytes: 1_000_000,
    fileTimeoutMs: 20_000,
    turnsPerMinute: 20,
    roomQueueCap: 50,
    maxToolResultBytes: 20_000_000,
  }),
  edits: EditsSchema.default({ reask: false, windowSeconds: 120 }),
  worker: WorkerSchema.default({ concurrency: 8 }),
  queue: QueueSchema.default({
    leaseSeconds: 10,
    deliveryDeadlineSeconds: 3600,
    retryMaxSeconds: 10,
    dedupeSeconds: 6 * 3600,
    typingAfterMs: 1000,
  }),
  shutdown: ShutdownSchema.default({ graceSeconds: 10 }),
  http: HttpSchema.optional(),
  telegram: TelegramSchema.optional(),
  matrix: MatrixSchema.optional(),
});
export type Config = z.infer<typeof ConfigSchema>;
export type TelegramConfig = z.infer<typeof TelegramSchema>;
export type MatrixConfig = z.infer<typeof MatrixSchema>;
export type EditsConfig = z.infer<typeof EditsSchema>;

export { expandEnv } from "./config-env.js";
export type { ConfigIssue } from "./config-issues.js";
export { issueLine as issueLineOf } from "./config-issues.js";

/** Everything `roomgate config check` reports: the config when valid, every error, every warning. */
export interface ConfigReport {
  config?: Config;
  errors: ConfigIssue[];
  warnings: ConfigIssue[];
}

/**
 * Validates configuration text completely without starting anything: YAML syntax,
 * `${VAR}` references, every field (unknown keys included) and the checks across
 * fields, all collected so that every mistake is reported at once.
 */
export function checkConfigText(text: string, env: NodeJS.ProcessEnv = process.env): ConfigReport {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length > 0) {
    return {
      errors: doc.errors.map((err) => ({ path: "(file)", message: `not valid YAML: ${err.message}` })),
      warnings: [],
    };
  }
  const raw: unknown = doc.toJS() ?? {};
  const errors: ConfigIssue[] = [];
  const expanded = expandEnv(raw, env, errors);
  const result = ConfigSchema.safeParse(expanded);
  if (!result.success) {
    // A field whose variable is unset is reported once, as the unset variable.
    const unset = new Set(errors.map((e) => e.path));
    errors.push(...fromZodIssues(ConfigSchema, result.error.issues).filter((e) => !unset.has(e.path)));
  }
  const across = checkAcrossFields(expanded);
  errors.push(...across.errors);
  return {
    ...(result.success && errors.length === 0 ? { config: result.data } : {}),
    errors: placeIssues(errors, doc, lines),
    warnings: placeIssues(across.warnings, doc, lines),
  };
}

/** Parses and validates configuration text; a ConfigError lists every problem with its full path. */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env): Config {
  return validConfig(checkConfigText(text, env)).config;
}

function validConfig(report: ConfigReport): { config: Config; warnings: ConfigIssue[] } {
  if (report.config) return { config: report.config, warnings: report.warnings };
  const lines = report.errors.map(issueLine);
  const message =
    lines.length === 1 ? lines[0]! : `the configuration has ${lines.length} errors:\n  ${lines.join("\n  ")}`;
  throw new ConfigError(message, { issues: report.errors });
}

/** Reads a configuration file's text; an unreadable file is a ConfigError naming it. */
export function readConfigFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read configuration file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Reads, expands and validates a YAML configuration file. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  return parseConfig(readConfigFile(file), env);
}

/** Like `loadConfig`, also returning the warnings, for a start to log. */
export function loadConfigWithWarnings(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): { config: Config; warnings: ConfigIssue[] } {
  return validConfig(checkConfigText(readConfigFile(file), env));
}
