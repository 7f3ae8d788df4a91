import type { Api } from "grammy";
import type { Update } from "grammy/types";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Inbox } from "../core/adapter.js";
import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { telegramDmBinding, telegramGroupBinding } from "../core/bindings.js";
import { telegramRoom } from "../core/room.js";
import { edgeTexts } from "../edge/edge-texts.js";
import type { FloodGate } from "../edge/flood-gate.js";
import { pairingCodeIn, type PairingGate } from "../edge/pairing-gate.js";
import { StrangerGate } from "../edge/stranger-gate.js";
import { NOOP_DATA, pagedKeyboard, parsePageData } from "../render/telegram-keyboard.js";
import type { Keys } from "../sessions/keys.js";
import type { ChatMigrations } from "./chat-migrations.js";
import type { DocumentReader } from "./document-reader.js";
import type { TopicLobby } from "./topic-lobby.js";
import { loggableError } from "./loggable-error.js";
import { refusalsTotal } from "../ops/metrics.js";
import { groupBinding } from "./telegram-access.js";
import { reaskEdit } from "./telegram-edits.js";
import { edgeOf, normalizeUpdate, type BotIdentity, type TelegramEdge } from "./update-normalizer.js";

/**
 * Callback data of the single button left on an offer once an option was chosen: a
 * press on it only stops the client's spinner, it never becomes a turn.
 */
export const CHOSEN_BUTTON_DATA = "rg:chosen";

/** What the intake needs besides the bot: Redis for the edge's notices and limits. */
export interface IntakeDeps {
  inbox: Inbox;
  redis: RedisClient;
  keys: Keys;
  flood: FloodGate;
  log: Logger;
  /** Groups the bot saw migrate to a supergroup; the identity's aliases read the same record. */
  migrations?: ChatMigrations;
  /** `/pair <code>`, taken at the edge before the allowlist. */
  pairing?: PairingGate;
  /** Answers the General of a chat with topics, and topics whose agent is gone. */
  lobby?: TopicLobby;
}

/**
 * Where both receivers hand updates. The edge comes first and does no I/O but Redis
 * notice keys: a stranger gets at most one refusal an hour and nothing is downloaded,
 * queued or stored for them; an unbound group is left with one notice; page turns of a
 * large keyboard are answered here; a flood gets one notice and is not queued. Then the
 * update is normalised and enqueued; a document is read off this path (the sequential
 * intake never waits for a download) and enqueued when read. It throws when the inbox
 * cannot take an event, so that the update is not confirmed and arrives again.
 */
export class UpdateIntake {
  /** Document reads in flight, one chain per chat so that a chat's files keep their order. */
  private readonly reads = new Map<number, Promise<void>>();
  private readonly strangers: StrangerGate;

  constructor(
    private readonly api: Api,
    readonly identity: BotIdentity,
    private readonly reader: DocumentReader,
    private readonly deps: IntakeDeps,
  ) {
    this.strangers = new StrangerGate(deps.redis);
  }

  /** Takes one update: enqueued, answered on the spot, refused, or ignored. */
  async receive(received: Update): Promise<void> {
    if (received.my_chat_member) return this.membership(received.my_chat_member);
    let update = received;
    if (received.edited_message) {
      // An edit asked again is a new message; its update id keeps it apart from the original.
      if (!reaskEdit(received.edited_message, this.identity.edits, this.deps.log)) return;
      update = { update_id: received.update_id, message: received.edited_message };
    }
    const press = update.callback_query;
    if (press && (press.data === CHOSEN_BUTTON_DATA || press.data === NOOP_DATA || !press.message)) {
      return this.answer(press.id);
    }
    const moved = update.message?.migrate_to_chat_id ?? update.message?.migrate_from_chat_id;
    if (update.message && moved !== undefined) return this.migrated(update.message);
    await this.loadTopics(update);
    const seen = edgeOf(update, this.identity);
    if (seen === null) return;
    const { chat, from, edge } = seen;
    if (chat.type !== "private" && !(await this.bound(chat.id))) return this.leave(chat.id, chat.type);
    const code = update.message?.text === undefined ? undefined : pairingCodeIn(update.message.text);
    if (code !== undefined && this.deps.pairing) return this.pair(this.deps.pairing, seen, code);
    const topic = topicOf(seen);
    if (!edge.sender.allowed) return this.refuse(update, edge.room, chat.id, from.id, topic);
    if (seen.binding.kind !== "agent") {
      // A General listing topics, a topic whose agent is gone: answered here, within the flood limits.
      const flood = await this.deps.flood.check(edge.room, edge.sender.id);
      if (flood.admit) return this.deps.lobby?.answer(update, seen);
      return this.refuseFlood(chat.id, seen.press?.id, flood.notice, topic);
    }
    const page = press?.data === undefined ? null : parsePageData(press.data);
    if (press && page) return this.turnPage(press, page);
    if (update.message?.document) {
      // A file is downloaded only once admitted, so its flood check comes first, on its own.
      const flood = await this.deps.flood.check(edge.room, edge.sender.id);
      if (flood.admit) this.readLater(update, seen);
      else await this.refuseFlood(chat.id, undefined, flood.notice, topic);
      return;
    }
    await this.enqueue(update, seen, true);
  }

  /**
   * Reads the topics the bot made in a private chat before its edge is decided, so that a
   * topic's room is bound to its namespace; only for senders the bot serves in DMs.
   */
  private async loadTopics(update: Update): Promise<void> {
    const { topics, config } = this.identity;
    const chat = update.message?.chat ?? update.callback_query?.message?.chat;
    const from = update.message?.from ?? update.callback_query?.from;
    if (!topics || config.topics.length === 0 || chat?.type !== "private" || !from) return;
    if (config.users.includes(from.id)) await topics.load(chat.id);
  }

  /** Waits for the document reads in flight, so a stop does not lose one half-read. */
  async drain(): Promise<void> {
    await Promise.all(this.reads.values());
  }

  /**
   * Normalises and queues the update; with `flood` its flood limits are checked in the
   * same round trip, and the excess gets its one notice instead of being queued.
   */
  private async enqueue(update: Update, seen: TelegramEdge, flood = false): Promise<void> {
    let event: InboundEvent | null;
    try {
      event = await normalizeUpdate(update, seen, this.identity, (doc) => this.reader.read(doc));
    } catch (err) {
      // A malformed update would otherwise stall the bot: it is logged and skipped.
      this.deps.log.error(
        { err: loggableError(err), updateId: update.update_id },
        "telegram: could not read an update; skipped",
      );
      return;
    }
    if (event === null) return;
    if (!flood) {
      const fresh = await this.deps.inbox.enqueue(event);
      this.deps.log.debug({ eventId: event.eventId, room: event.room, fresh }, "telegram: update enqueued");
      return;
    }
    const queued = await this.deps.flood.enqueue(this.deps.inbox, event, event.sender.id);
    if (!queued.admit) {
      return this.refuseFlood(seen.chat.id, update.callback_query?.id, queued.notice, topicOf(seen));
    }
    this.deps.log.debug(
      { eventId: event.eventId, room: event.room, fresh: queued.fresh },
      "telegram: update enqueued",
    );
  }

  /** A flood: a press gets its toast (a spinner must stop), a message the one notice if due. */
  private async refuseFlood(
    chatId: number,
    pressId: string | undefined,
    notice: string | undefined,
    topic: number | undefined,
  ): Promise<void> {
    if (pressId !== undefined) return this.answer(pressId, notice);
    if (notice) await this.say(chatId, notice, topic);
  }

  private readLater(update: Update, seen: TelegramEdge): void {
    const chatId = seen.chat.id;
    const previous = this.reads.get(chatId) ?? Promise.resolve();
    const next = previous
      .then(() => this.enqueue(update, seen))
      .catch((err: unknown) =>
        this.deps.log.error(
          { err: loggableError(err), updateId: update.update_id },
          "telegram: a document could not be queued",
        ),
      )
      .finally(() => {
        if (this.reads.get(chatId) === next) this.reads.delete(chatId);
      });
    this.reads.set(chatId, next);
  }

  /**
   * A stranger: one refusal an hour (a toast for a press), in the topic they wrote in,
   * and nothing else — one log line per sender an hour and one Redis key per chat and
   * hour; repeats cost neither.
   */
  private async refuse(
    update: Update,
    room: string,
    chatId: number,
    userId: number,
    topic: number | undefined,
  ): Promise<void> {
    refusalsTotal.inc({ platform: "telegram" });
    // How an operator learns the ids to allow: the log names them, once an hour.
    if (this.strangers.logOnce(`tg:${userId}`)) {
      this.deps.log.info(
        { botId: this.identity.id, chatId, userId, room },
        "telegram: sender not on this bot's allowlist; refused (logged once an hour per sender)",
      );
    }
    const press = update.callback_query;
    if (press) return this.answer(press.id, edgeTexts.refusalToast);
    if (await this.strangers.claim(this.deps.keys.refused(room, `tg:${userId}`))) {
      await this.say(chatId, edgeTexts.refusal, topic);
    }
  }

  /**
   * `/pair <code>` from anyone (a stranger is who pairs): a code that opens one of this
   * bot's bindings adds the sender to it; the answer goes straight back from the edge.
   */
  private async pair(pairing: PairingGate, seen: TelegramEdge, code: string): Promise<void> {
    const bot = this.identity.config;
    const names = new Set([
      telegramDmBinding(bot, this.identity.id),
      ...bot.groups.map((g) => telegramGroupBinding(g, this.identity.id)),
    ]);
    const reply = await pairing.redeem(
      {
        senderId: seen.edge.sender.id,
        ...(seen.edge.sender.name ? { name: seen.edge.sender.name } : {}),
        room: seen.edge.room,
        accepts: (binding) => names.has(binding),
      },
      code,
    );
    if (reply) await this.say(seen.chat.id, reply, topicOf(seen));
  }

  /** The bot was added to a chat: a group no binding names is left, with one notice. */
  private async membership(change: NonNullable<Update["my_chat_member"]>): Promise<void> {
    const { chat, new_chat_member: member } = change;
    if (chat.type === "private" || (member.status !== "member" && member.status !== "administrator")) return;
    if (await this.bound(chat.id)) return;
    await this.leave(chat.id, chat.type);
  }

  /**
   * Telegram's service message that a group became a supergroup (in the old chat
   * `migrate_to_chat_id`, in the new one `migrate_from_chat_id`): recorded, so that the
   * group goes on as the same room under the binding that names either id.
   */
  private async migrated(message: NonNullable<Update["message"]>): Promise<void> {
    const [from, to] =
      message.migrate_to_chat_id !== undefined
        ? [message.chat.id, message.migrate_to_chat_id]
        : [message.migrate_from_chat_id!, message.chat.id];
    const { migrations } = this.deps;
    const { config } = this.identity;
    if (!migrations || (groupBinding(config, from, migrations) ?? groupBinding(config, to)) === undefined)
      return;
    // Both service messages arrive; the second changes nothing and is not logged again.
    if (!(await migrations.record(from, to))) return;
    this.deps.log.info(
      { botId: this.identity.id, from, to, room: telegramRoom(this.identity.id, this.roomChat(to)) },
      "telegram: a group was migrated to a supergroup; it continues as the same room and binding under its new id",
    );
  }

  /**
   * Whether a binding names the group, by its id or the id it had or has across a
   * migration; a group not found is looked up again in the migrations every process
   * recorded (a sender may have learnt one from a refused reply) before it is given up.
   */
  private async bound(chatId: number): Promise<boolean> {
    const { config } = this.identity;
    if (groupBinding(config, chatId, this.deps.migrations) !== undefined) return true;
    if (!this.deps.migrations) return false;
    await this.deps.migrations.load();
    return groupBinding(config, chatId, this.deps.migrations) !== undefined;
  }

  /** The chat id a room key keeps: the first the group had. */
  private roomChat(chatId: number): number {
    return this.deps.migrations?.original(chatId) ?? chatId;
  }

  /**
   * A chat no binding names is left once an hour, with one notice and one log line:
   * being added again, or messages from it, inside the hour cost nothing at all.
   */
  private async leave(chatId: number, type: string): Promise<void> {
    const room = telegramRoom(this.identity.id, this.roomChat(chatId));
    if (!(await this.strangers.claim(this.deps.keys.notice(room, "leaving", "bot")))) return;
    this.deps.log.warn(
      { botId: this.identity.id, chatId },
      "telegram: in a chat no binding names; leaving (once an hour per chat)",
    );
    if (type !== "channel") await this.say(chatId, edgeTexts.leaving);
    await this.api.leaveChat(chatId).catch((err: unknown) => {
      this.deps.log.warn({ err: loggableError(err), chatId }, "telegram: could not leave a chat");
    });
  }

  /** ◀ ▶ on a paged keyboard: the page is rebuilt from the button's data and edited in place. */
  private async turnPage(
    press: NonNullable<Update["callback_query"]>,
    page: NonNullable<ReturnType<typeof parsePageData>>,
  ): Promise<void> {
    await this.answer(press.id);
    const message = press.message!;
    const inline_keyboard = pagedKeyboard(page.offerId, page.total, page.page).map((row) =>
      row.map(({ text, data }) => ({ text, callback_data: data })),
    );
    await this.api
      .editMessageReplyMarkup(message.chat.id, message.message_id, { reply_markup: { inline_keyboard } })
      .catch((err: unknown) =>
        this.deps.log.debug({ err: loggableError(err) }, "telegram: could not turn a keyboard page"),
      );
  }

  private async answer(id: string, text?: string): Promise<void> {
    await this.api.answerCallbackQuery(id, text === undefined ? {} : { text }).catch((err: unknown) => {
      this.deps.log.debug({ err: loggableError(err) }, "telegram: could not answer a button press");
    });
  }

  /** One line from the edge, sent directly into the topic it answers: it touches no session and no queue. */
  private async say(chatId: number, text: string, topic?: number): Promise<void> {
    const where = topic === undefined ? {} : { message_thread_id: topic };
    await this.api.sendMessage(chatId, text, where).catch((err: unknown) => {
      this.deps.log.warn({ err: loggableError(err), chatId }, "telegram: could not send an edge notice");
    });
  }
}

/** The forum topic an update came from, so the edge's notice answers there. */
function topicOf(seen: TelegramEdge): number | undefined {
  const origin = seen.edge.origin;
  return origin.platform === "telegram" ? origin.topicId : undefined;
}
