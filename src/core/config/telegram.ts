import { z } from "zod";
import { TELEGRAM_TOKEN } from "../telegram-token.js";
import { OnUpdateSchema, SubscribeSchema } from "./proactive.js";
import { PortSchema } from "./process.js";
import { RespondSchema } from "./respond.js";
import { roleFields } from "./roles.js";

/**
 * A tool that turns a voice note into text (`stt.transcribe`): roomgate calls it and
 * asks the room's router with the text. `namespace` names its namespace when the tool's
 * prefix does not (default: the configured namespace whose prefix the tool name has).
 */
export const VoiceSchema = z.strictObject({
  tool: z.string().min(1),
  namespace: z.string().min(1).optional(),
});
export type VoiceConfig = z.infer<typeof VoiceSchema>;

/** A private-chat topic the bot creates (or finds) on /start, bound to its own namespace. */
const TelegramTopicSchema = z.strictObject({
  /** The topic's name as the person sees it; 1–128 characters, unique per bot. */
  name: z.string().min(1).max(128),
  namespace: z.string().min(1),
  voice: VoiceSchema.optional(),
});

const TelegramGroupSchema = z.strictObject({
  chat: z.number().int(),
  users: z.array(z.number().int()).default([]),
  /** `mentions`: only commands, mentions of the bot and replies to it; `all`: every message. */
  respond: RespondSchema,
  ...roleFields(z.number().int()),
  /** The group's namespace when it is not the bot's. */
  namespace: z.string().min(1).optional(),
  /** Forum topics bound to namespaces, by topic id (message_thread_id): `{ "11": runs }`. */
  topics: z
    .record(z.string().regex(/^[1-9]\d*$/, 'a topic id (message_thread_id), e.g. "11"'), z.string().min(1))
    .default({}),
  voice: VoiceSchema.optional(),
  /** MCP resources whose updates are posted into this group. */
  subscribe: SubscribeSchema,
  /** On an update: `show` the resource, or `ask` the router with it. */
  onUpdate: OnUpdateSchema,
});

const TelegramBotSchema = z.strictObject({
  token: z
    .string()
    .regex(TELEGRAM_TOKEN, "a Telegram bot token looks like <bot id>:<secret> (from BotFather)"),
  /** The namespace of chats without topics; optional when `topics` binds the private chats. */
  namespace: z.string().min(1).optional(),
  /** Allowed user ids for direct messages. */
  users: z.array(z.number().int()).default([]),
  /** Private-chat topics, one per namespace, created on /start (the bot needs topic mode in BotFather). */
  topics: z.array(TelegramTopicSchema).default([]),
  /** Groups are closed unless listed, each with its own sender allowlist. */
  groups: z.array(TelegramGroupSchema).default([]),
  /** Roles of the bot's direct chats (its `users`). */
  ...roleFields(z.number().int()),
  /** Turns voice notes into text for the router, in every room of the bot unless a topic or group names its own. */
  voice: VoiceSchema.optional(),
  /** MCP resources whose updates are posted to each allowed user's direct chat. */
  subscribe: SubscribeSchema,
  /** On an update: `show` the resource, or `ask` the router with it. */
  onUpdate: OnUpdateSchema,
});

const TelegramWebhookSchema = z.strictObject({
  /** Public base URL Telegram posts to (behind a TLS proxy); each bot's webhook is `<url>/<bot id>`. */
  url: z.url(),
  port: PortSchema.min(1, "a port is a number from 1 to 65535").default(8443),
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

/** Send limits shared by all processes (a self-hosted Bot API or paid broadcasts allow more). */
export const TelegramLimitsSchema = z
  .strictObject({
    botPerSecond: z.number().positive().default(30),
    chatPerSecond: z.number().positive().default(1),
    groupPerMinute: z.number().positive().default(20),
  })
  .prefault({});
export type TelegramLimits = z.infer<typeof TelegramLimitsSchema>;

/** The `telegram` section: the bots, how updates arrive, and the send limits. */
export const TelegramSchema = z.strictObject({
  apiRoot: z.url().optional(),
  mode: z.enum(["polling", "webhook"]).default("polling"),
  webhook: TelegramWebhookSchema.optional(),
  bots: z.array(TelegramBotSchema).default([]),
  limits: TelegramLimitsSchema,
});
export type TelegramConfig = z.infer<typeof TelegramSchema>;
export type TelegramBotConfig = TelegramConfig["bots"][number];
