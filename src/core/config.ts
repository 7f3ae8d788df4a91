import { readFileSync } from "node:fs";
import { z } from "zod";
import { parse as parseYaml } from "yaml";
import { ConfigError } from "./errors.js";

/** Which tools of a namespace a binding shows (`allow`/`deny` globs) and runs without asking (`trust`). */
export const NamespaceToolsSchema = z
  .object({
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
export const DiscoverySchema = z.object({
  search: z.string().min(1),
  describe: z.string().min(1).optional(),
  call: z.string().min(1),
});

/** One namespace: a stdio command or a Streamable HTTP url (DESIGN §10). */
export const NamespaceConfigSchema = z
  .object({
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

const TelegramGroupSchema = z.object({
  chat: z.number().int(),
  users: z.array(z.number().int()).default([]),
});

const TelegramBotSchema = z.object({
  token: z.string().min(1),
  namespace: z.string().min(1),
  /** Allowed user ids for direct messages. */
  users: z.array(z.number().int()).default([]),
  /** Groups are closed unless listed, each with its own sender allowlist. */
  groups: z.array(TelegramGroupSchema).default([]),
});

const TelegramSchema = z.object({
  apiRoot: z.url().optional(),
  mode: z.enum(["polling", "webhook"]).default("polling"),
  webhook: z
    .object({
      url: z.url(),
      port: z.number().int().positive().default(8443),
      host: z.string().default("0.0.0.0"),
      secretToken: z.string().min(1),
    })
    .optional(),
  bots: z.array(TelegramBotSchema).default([]),
  /** Send limits shared by all processes (a self-hosted Bot API or paid broadcasts allow more). */
  limits: z
    .object({
      botPerSecond: z.number().positive().default(30),
      chatPerSecond: z.number().positive().default(1),
      groupPerMinute: z.number().positive().default(20),
    })
    .default({ botPerSecond: 30, chatPerSecond: 1, groupPerMinute: 20 }),
});

const MatrixRoomSchema = z.object({
  room: z.string().min(1),
  namespace: z.string().min(1),
  users: z.array(z.string()).default([]),
  /** Users at or above this power level are allowed too. */
  powerLevel: z.number().int().optional(),
});

const MatrixSchema = z.object({
  homeserver: z.url(),
  accessToken: z.string().min(1),
  /** Users whose invites to a configured room are accepted; default: the room's users. */
  inviters: z.array(z.string()).default([]),
  rooms: z.array(MatrixRoomSchema).default([]),
});

/** The YAML configuration file (DESIGN §10), validated at load; types derive from it. */
export const ConfigSchema = z.object({
  redis: z
    .object({
      url: z.string().optional(),
      prefix: z.string().min(1).default("rg"),
      /** Run on an external Redis without persistence, accepting that a restart loses queued turns. */
      volatile: z.boolean().default(false),
    })
    .default({ prefix: "rg", volatile: false }),
  namespaces: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/), NamespaceConfigSchema).default({}),
  sessions: z
    .object({
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
    })
    .default({
      idleSeconds: 7 * 24 * 3600,
      historyTurns: 20,
      choiceSeconds: 24 * 3600,
      slotSeconds: 15 * 60,
    }),
  limits: z
    .object({
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
    })
    .default({
      maxMessageChars: 16_000,
      maxFileBytes: 1_000_000,
      fileTimeoutMs: 20_000,
      turnsPerMinute: 20,
      roomQueueCap: 50,
    }),
  worker: z.object({ concurrency: z.number().int().positive().default(8) }).default({ concurrency: 8 }),
  queue: z
    .object({
      /** A dead worker's rooms are taken over this long after its last lease renewal. */
      leaseSeconds: z.number().positive().default(10),
      /** A turn still undeliverable this long after its first wait goes to the dead letters. */
      deliveryDeadlineSeconds: z.number().positive().default(3600),
      /** How long a platform event id is remembered, so a redelivered event is not answered twice. */
      dedupeSeconds: z
        .number()
        .int()
        .positive()
        .default(6 * 3600),
      /** Typing is shown only for turns that run longer than this. */
      typingAfterMs: z.number().int().nonnegative().default(1000),
    })
    .default({
      leaseSeconds: 10,
      deliveryDeadlineSeconds: 3600,
      dedupeSeconds: 6 * 3600,
      typingAfterMs: 1000,
    }),
  shutdown: z.object({ graceSeconds: z.number().nonnegative().default(10) }).default({ graceSeconds: 10 }),
  http: z
    .object({ port: z.number().int().nonnegative().default(9464), host: z.string().default("127.0.0.1") })
    .optional(),
  telegram: TelegramSchema.optional(),
  matrix: MatrixSchema.optional(),
});
export type Config = z.infer<typeof ConfigSchema>;
export type TelegramConfig = z.infer<typeof TelegramSchema>;
export type MatrixConfig = z.infer<typeof MatrixSchema>;

/** Replaces `${VAR}` in every string of a parsed YAML tree from the environment. */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path: string[] = []): unknown {
  if (typeof value === "string") {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
      const v = env[name];
      if (v === undefined) {
        throw new ConfigError(`${path.join(".") || "(root)"}: environment variable ${name} is not set`);
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, env, [...path, String(i)]));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expandEnv(v, env, [...path, k])]));
  }
  return value;
}

/** Parses and validates configuration text; an error names the path of the bad field. */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env): Config {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    throw new ConfigError(`the configuration is not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  const result = ConfigSchema.safeParse(expandEnv(raw, env));
  if (!result.success) {
    const first = result.error.issues[0];
    const where = first && first.path.length > 0 ? first.path.join(".") : "(root)";
    throw new ConfigError(`${where}: ${first?.message ?? "invalid"}`, { cause: result.error });
  }
  const config = result.data;
  for (const bot of config.telegram?.bots ?? []) {
    if (!config.namespaces[bot.namespace]) {
      throw new ConfigError(`telegram.bots: namespace "${bot.namespace}" is not configured under namespaces`);
    }
  }
  for (const room of config.matrix?.rooms ?? []) {
    if (!config.namespaces[room.namespace]) {
      throw new ConfigError(`matrix.rooms: namespace "${room.namespace}" is not configured under namespaces`);
    }
  }
  return config;
}

/** Reads, expands and validates a YAML configuration file. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read configuration file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return parseConfig(text, env);
}
