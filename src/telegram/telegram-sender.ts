import { GrammyError, type Api } from "grammy";
import type { InlineKeyboardMarkup } from "grammy/types";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { DeliveryContext, FileLimits, PlatformSender } from "../core/adapter.js";
import { PermanentSendError } from "../core/delivery-errors.js";
import { originOn, type InboundEvent, type InboundFile } from "../core/event.js";
import type { TelegramLimits } from "../core/config.js";
import type { TelegramOrigin } from "../core/origin.js";
import type { Logger } from "../core/log.js";
import type { ProgressUpdate } from "../core/progress.js";
import type { TurnOutcome } from "../core/reply.js";
import { CHOSEN_BUTTON_DATA } from "../render/telegram-keyboard.js";
import { renderTelegram } from "../render/telegram.js";
import type { RedisRateLimiter } from "../scheduler/rate-limiter.js";
import type { Keys } from "../sessions/keys.js";
import { MovedChats } from "./moved-chats.js";
import { fetchFileForTool, fileRootOf } from "./telegram-files.js";
import { sendAttachments } from "./telegram-media.js";
import { draftIdOf, draftRef, TelegramDrafts, type DraftTiming } from "./telegram-drafts.js";
import { deliverPersonally } from "./personal-reply.js";
import { sendPart } from "./reply-part.js";
import { TelegramProgress } from "./telegram-progress.js";
import { TelegramOriginError, UnknownBotError } from "./telegram-errors.js";
import { messageRef, parseEphemeralRef, parseMessageRef } from "./telegram-origin.js";
import { loggableError } from "./loggable-error.js";
import { classifySendError, DEFAULT_TELEGRAM_LIMITS, inSendScope, installSendLimits } from "./send-limits.js";

/** APIs that already carry the send limits, so two senders on one API do not reserve twice. */
const limited = new WeakSet<Api>();

/** Telegram shows at most this many characters in a callback query toast. */
const TOAST_LIMIT = 200;

/** Timing of the sender's signs of life; tests shorten them. */
export interface SenderTiming {
  /** A typing indicator lasts about five seconds; it is renewed a little sooner. */
  typingEveryMs: number;
  /**
   * A press still unanswered this long into its turn is answered without a toast:
   * the client spins until then, and Telegram stops taking answers after a while.
   */
  pressDeadlineMs: number;
  /** Pace and renewal of progress drafts in private chats. */
  drafts?: Partial<DraftTiming>;
}

const TIMING: SenderTiming = { typingEveryMs: 4000, pressDeadlineMs: 8000 };

/**
 * The Telegram half of delivery: answers button presses, marks a chosen offer, and
 * sends the rendered reply part by part, each part once per turn (the ledger),
 * falling back to plain text if Telegram cannot parse it. Every attempt of every
 * send passes the send limits installed on the bot's API (src/telegram/send-limits.ts).
 */
export class TelegramSender implements PlatformSender {
  readonly platform = "telegram" as const;

  private readonly timing: SenderTiming;
  private readonly status: TelegramProgress;
  private readonly drafts: TelegramDrafts;
  private readonly moved: MovedChats;

  constructor(
    private readonly apis: ReadonlyMap<number, Api>,
    keys: Keys,
    limiter: RedisRateLimiter,
    private readonly log: Logger,
    timing: Partial<SenderTiming> = {},
    limits: TelegramLimits = DEFAULT_TELEGRAM_LIMITS,
    /** Where a migration learnt from a refused send is recorded for every process; without it, only followed. */
    redis?: RedisClient,
    /** The Bot API root files are fetched from (`telegram.apiRoot`). */
    private readonly apiRoot?: string,
  ) {
    this.timing = { ...TIMING, ...timing };
    this.status = new TelegramProgress(log);
    this.drafts = new TelegramDrafts(log, this.timing.drafts);
    this.moved = new MovedChats(keys, redis);
    for (const [botId, api] of apis) {
      if (limited.has(api)) continue;
      limited.add(api);
      installSendLimits(api, { botId, limiter, limits, log });
    }
  }

  /** Delivers one turn's outcome and returns the refs (`<chatId>:<messageId>`) of the reply's parts. */
  async deliver(event: InboundEvent, outcome: TurnOutcome, context: DeliveryContext): Promise<string[]> {
    const origin = originOf(event);
    const api = this.api(origin.botId);
    // Every press is answered, even with nothing to say, or the client keeps spinning.
    if (event.kind === "choice" && origin.callbackQueryId !== undefined) {
      await this.answerPress(api, origin.callbackQueryId, outcome.toast, context.log);
    }
    if (outcome.chosen) await this.markChosen(api, origin, outcome.chosen, context);
    if (!outcome.reply) return [];
    const parts = renderTelegram(outcome.reply);
    // Where the reply goes: the event's chat, or the supergroup it became while the turn ran.
    const target = { ...origin };
    // Asked of one member: theirs alone where Telegram takes it, else the room's as before.
    const reply = outcome.reply;
    const alone = await this.moved.send(target, context, () =>
      deliverPersonally(api, event, target, reply, parts, context),
    );
    if (alone) return alone;
    const refs: string[] = [];
    for (const [i, part] of parts.entries()) {
      const key = `part:${i}`;
      const sent = await context.ledger.get(key);
      if (sent !== null) {
        refs.push(sent);
        continue;
      }
      const message = await this.moved.send(target, context, () =>
        sendPart(api, target, part, { first: i === 0, key, context }),
      );
      const ref = messageRef(message.chat.id, message.message_id);
      await context.ledger.set(key, ref);
      refs.push(ref);
    }
    // Files go after the text; the options stay on the last text part, which `refs` ends with.
    await this.moved.send(target, context, () =>
      sendAttachments(api, target, outcome.reply!.attachments ?? [], context),
    );
    return refs;
  }

  /**
   * Shows "typing…" in the event's chat (and topic) until the returned function is
   * called; a press whose turn runs long is answered before Telegram gives up on it.
   */
  working(event: InboundEvent): () => void {
    const origin = originOn(event, "telegram");
    const api = origin ? this.apis.get(origin.botId) : undefined;
    if (!origin || !api) return () => undefined;
    const { chatId, topicId, callbackQueryId } = origin;
    let inFlight = false;
    const tick = () => {
      // A slow or rate-limited call is not stacked with more of the same.
      if (inFlight) return;
      inFlight = true;
      api
        .sendChatAction(chatId, "typing", topicId === undefined ? {} : { message_thread_id: topicId })
        .catch((err: unknown) =>
          this.log.debug({ err: loggableError(err), chatId }, "telegram: sendChatAction failed"),
        )
        .finally(() => (inFlight = false));
    };
    tick();
    const timer = setInterval(tick, this.timing.typingEveryMs);
    const deadline =
      event.kind === "choice" && callbackQueryId !== undefined
        ? setTimeout(
            () => void this.answerPress(api, callbackQueryId, undefined, this.log).catch(() => undefined),
            this.timing.pressDeadlineMs,
          )
        : undefined;
    return () => {
      clearInterval(timer);
      clearTimeout(deadline);
    };
  }

  /**
   * Shows a running call's progress: in a private chat as the turn's streamed draft
   * (telegram-drafts.ts), elsewhere — or for a bot Telegram refuses drafts for — in one
   * status message edited in place (telegram-progress.ts).
   */
  async progress(event: InboundEvent, update: ProgressUpdate): Promise<void> {
    const origin = originOf(event);
    const api = this.api(origin.botId);
    // Sends, drafts and edits pass the API's send limits (installSendLimits) like every other call.
    if (this.drafts.applies(origin) && (await this.drafts.update(api, event.eventId, origin, update))) return;
    await this.status.update(api, origin, update);
  }

  /** The ref a Stop of this turn's progress draft carries; none where progress is not a draft. */
  progressRef(event: InboundEvent): string | undefined {
    const origin = originOn(event, "telegram");
    return origin && this.drafts.applies(origin) ? draftRef(draftIdOf(event.eventId)) : undefined;
  }

  /**
   * Fetches a photo, voice note or file the person sent (its file_id) for the tool that
   * takes it: no more than `limits.maxBytes` read, within `limits.timeoutMs`.
   */
  async fetchFile(event: InboundEvent, file: InboundFile, limits: FileLimits): Promise<Uint8Array> {
    const origin = originOf(event);
    const api = this.api(origin.botId);
    return fetchFileForTool(api, fileRootOf(this.apiRoot, api.token), file, limits, this.log);
  }

  private api(botId: number): Api {
    const api = this.apis.get(botId);
    if (!api) throw new UnknownBotError(botId);
    return api;
  }

  private async answerPress(api: Api, id: string, toast: string | undefined, log: Logger): Promise<void> {
    const text = toast === undefined ? undefined : clip(toast, TOAST_LIMIT);
    try {
      await api.answerCallbackQuery(id, text === undefined ? {} : { text });
    } catch (err) {
      // An expired or already answered query (a retried turn) leaves nothing to do.
      if (!(err instanceof GrammyError && err.error_code === 400)) throw err;
      log.debug({ err: err.description }, "telegram: callback query could not be answered");
    }
  }

  /** Leaves one button `✅ label` on the offer's message, so the offer cannot be pressed again. */
  private async markChosen(
    api: Api,
    origin: TelegramOrigin,
    chosen: NonNullable<TurnOutcome["chosen"]>,
    context: DeliveryContext,
  ): Promise<void> {
    // The options sit on the last message of the offer (an ephemeral one: its receiver's).
    const ref = chosen.messageRefs.at(-1) ?? "";
    const alone = parseEphemeralRef(ref);
    const target = alone ? { chatId: alone.chatId, messageId: 0 } : parseMessageRef(ref);
    if (!target || target.chatId !== origin.chatId || (await context.ledger.get("chosen")) !== null) return;
    const markup: InlineKeyboardMarkup = {
      inline_keyboard: [[{ text: `✅ ${chosen.label}`, callback_data: CHOSEN_BUTTON_DATA }]],
    };
    try {
      await inSendScope(context.gate, "chosen", () =>
        alone
          ? api.editEphemeralMessageReplyMarkup(alone.chatId, alone.receiverId, alone.ephemeralId, {
              reply_markup: markup,
            })
          : api.editMessageReplyMarkup(target.chatId, target.messageId, { reply_markup: markup }),
      );
    } catch (err) {
      const why = classifySendError("editMessageReplyMarkup", err);
      // A wait or a lost lease stops the turn; a refused edit is cosmetic (a second use is refused anyway).
      if (!(why instanceof PermanentSendError)) throw why;
      const notModified = err instanceof GrammyError && err.description.includes("message is not modified");
      if (!notModified)
        context.log.warn(
          { err: loggableError(err), ref: chosen.messageRefs.at(-1) },
          "telegram: could not mark the chosen option",
        );
    }
    await context.ledger.set("chosen", ref);
  }
}

function originOf(event: InboundEvent): TelegramOrigin {
  const origin = originOn(event, "telegram");
  if (!origin) throw new TelegramOriginError(`event ${event.eventId} is not a Telegram event`);
  return origin;
}

/** Cuts bot-written text (never a namespace's) to a limit, between code points, with an ellipsis. */
function clip(text: string, limit: number): string {
  const points = [...text];
  return points.length <= limit ? text : points.slice(0, limit - 1).join("") + "…";
}
