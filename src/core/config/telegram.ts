import { z } from "zod";
import { TELEGRAM_TOKEN } from "../telegram-token.js";
import { OnUpdateSchema, SubscribeSchema } from "./proactive.js";
import { RespondSchema } from "./respond.js";

const TelegramGroupSchema = z.strictObject({
  chat: z.number().int(),
  users: z.array(z.number().int()).default([]),
  /** `mentions`: only commands, mentions of the bot and replies to it; `all`: every message. */
  respond: RespondSchema,
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
  /** MCP resources whose updates are posted to each allowed user's direct chat. */
  subscribe: SubscribeSchema,
  /** On an update: `show` the resource, or `ask` the router with it. */
  onUpdate: OnUpdateSchema,
});

const TelegramWebhookSchema = z.strictObject({
  url: z.url(),
  port: z.number().int().positive().default(8443),
  host: z.string().default("0.0.0.0"),
  secretToken: z.string().min(1),
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
