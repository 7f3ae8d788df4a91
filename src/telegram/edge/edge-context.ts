import { Context, type Api } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import { topicOf, type TelegramEdge } from "../edge-record.js";
import { loggableError } from "../loggable-error.js";
import type { EdgeDeps } from "./edge-deps.js";

/** A step of the edge read the edge record before the binding step decided it: the chain is out of order. */
export class EdgeOrderError extends Error {
  constructor(readonly updateId: number) {
    super(
      `telegram edge: update ${updateId} reached a step that needs its edge record before it was decided`,
    );
    this.name = "EdgeOrderError";
  }
}

/**
 * grammY's context for one update on its way through the edge (src/telegram/edge/), with
 * what the steps share: the bot's edge parts (`deps`), the update as the edge takes it
 * (an edit asked again is a message here), its edge record once the binding step
 * decided it, and the edge's own one-line replies, which touch no session and no queue
 * and never throw.
 */
export class EdgeContext extends Context {
  /** The update as the edge takes it: an edit asked again is its message, under the edit's update id. */
  taken: Update;
  private record: TelegramEdge | undefined;

  constructor(
    update: Update,
    api: Api,
    me: UserFromGetMe,
    readonly deps: EdgeDeps,
  ) {
    super(update, api, me);
    this.taken = update;
  }

  /** The edge record the binding step decided; the steps after it read it here. */
  get seen(): TelegramEdge {
    if (!this.record) throw new EdgeOrderError(this.update.update_id);
    return this.record;
  }

  set seen(record: TelegramEdge) {
    this.record = record;
  }

  /** One line from the edge into a chat (and topic), sent directly: a failure is logged, not thrown. */
  async say(chatId: number, text: string, topic?: number): Promise<void> {
    const where = topic === undefined ? {} : { message_thread_id: topic };
    await this.api.sendMessage(chatId, text, where).catch((err: unknown) => {
      this.deps.log.warn({ err: loggableError(err), chatId }, "telegram: could not send an edge notice");
    });
  }

  /** One line into the chat and topic the decided update came from. */
  async sayHere(text: string): Promise<void> {
    await this.say(this.seen.chat.id, text, topicOf(this.seen));
  }

  /** Answers a button press (stopping the client's spinner), with a toast when `text` is given. */
  async toast(pressId: string, text?: string): Promise<void> {
    await this.api.answerCallbackQuery(pressId, text === undefined ? {} : { text }).catch((err: unknown) => {
      this.deps.log.debug({ err: loggableError(err) }, "telegram: could not answer a button press");
    });
  }

  /** A flood: a press gets its toast (a spinner must stop), a message the one notice if due. */
  async refuseFlood(notice: string | undefined): Promise<void> {
    const press = this.seen.press;
    if (press) return this.toast(press.id, notice);
    if (notice) await this.sayHere(notice);
  }
}
