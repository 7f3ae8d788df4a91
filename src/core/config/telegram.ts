import { z } from "zod";
import { TELEGRAM_TOKEN } from "../telegram-token.js";
import { OnUpdateSchema, SubscribeSchema } from "./proactive.js";
import { RespondSchema } from "./respond.js";
import { roleFields } from "./roles.js";

const TelegramGroupSchema = z.strictObject({
  chat: z.number().int(),
  users: z.array(z.number().int()).default([]),
  /** `mentions`: only commands, mentions of the bot and replies to it; `all`: every message. */
  respond: RespondSchema,
  ...roleFields(z.number().int()),
  /** MCP resources whose updates are posted into this group. */
  subscribe: SubscribeSchema,
  /** On an update: `show` the resource, or `ask` the router with it. */
  onUpdate: OnUpdateSchema,
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
  /** Roles of the bot's direct chats (its `users`). */
  ...roleFields(z.number().int()),
  /** MCP resources whose updates are posted to each allowed user's direct chat. */
  subscribe: SubscribeSchema,
  /** On an update: `show` the resource, or `ask` the router with it. */
  onUpdate: OnUpdateSchema,
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
