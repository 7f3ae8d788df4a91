import { createHash } from "node:crypto";
import { GrammyError, type Api } from "grammy";
import type { Logger } from "../core/log.js";
import type { ProgressUpdate } from "../core/progress.js";
import { loggableError } from "./loggable-error.js";
import type { TelegramOrigin } from "../core/origin.js";
import { sleep } from "../core/retry.js";

/** Timing of drafts; tests shorten them. */
export interface DraftTiming {
  /** At most one draft change per this many ms per turn: Telegram's pace of one message a second per chat. */
  everyMs: number;
  /** A draft is a preview that vanishes after about 30 s: the text is sent again this often while the call runs. */
  keepAliveMs: number;
}

const TIMING: DraftTiming = { everyMs: 1000, keepAliveMs: 20_000 };

interface Draft {
  draftId: number;
  origin: TelegramOrigin;
  /** The newest text not yet shown. */
  pending: string | undefined;
  shown: string | undefined;
  lastAt: number;
  timer: NodeJS.Timeout | undefined;
  flushing: Promise<void>;
  done: boolean;
}

/**
 * A running call's progress in a private chat as a streamed draft (sendMessageDraft):
 * one draft id per turn, changed in place no faster than `everyMs` with the latest text
 * winning, renewed while the call runs so the preview does not lapse, and left to end
 * when the answer arrives as a normal message. A bot Telegram refuses drafts for (no
 * topic mode, an older Bot API server) is remembered, and `update` resolves false so
 * the caller shows an edited status message instead.
 */
export class TelegramDrafts {
  private readonly drafts = new Map<string, Draft>();
  private readonly refused = new Set<number>();
  private readonly timing: DraftTiming;

  constructor(
    private readonly log: Logger,
    timing: Partial<DraftTiming> = {},
  ) {
    this.timing = { ...TIMING, ...timing };
  }

  /** Whether drafts may be tried for this chat: private chats of bots that have not refused them. */
  applies(origin: TelegramOrigin): boolean {
    return origin.chatType === "private" && !this.refused.has(origin.botId);
  }

  /**
   * Shows one update of the turn `turnId` as its draft; false when the bot cannot
   * stream drafts (the update was not shown and the caller falls back).
   */
  async update(api: Api, turnId: string, origin: TelegramOrigin, update: ProgressUpdate): Promise<boolean> {
    let draft = this.drafts.get(turnId);
    if (update.done) {
      // The answer follows as a normal message, which ends the draft; nothing more is streamed.
      if (draft) this.finish(turnId, draft);
      return true;
    }
    if (!draft) {
      draft = {
        draftId: draftIdOf(turnId),
        origin,
        pending: update.text,
        shown: undefined,
        lastAt: 0,
        timer: undefined,
        flushing: Promise.resolve(),
        done: false,
      };
      this.drafts.set(turnId, draft);
      if (!(await this.send(api, draft, update.text))) {
        this.drafts.delete(turnId);
        return false;
      }
      return true;
    }
    draft.pending = update.text;
    const current = draft;
    draft.flushing = draft.flushing.then(() => this.flush(api, current));
    return true;
  }

  private async flush(api: Api, draft: Draft): Promise<void> {
    const wait = draft.lastAt + this.timing.everyMs - Date.now();
    if (wait > 0) await sleep(wait);
    const text = draft.pending;
    if (draft.done || text === undefined || text === draft.shown) return;
    await this.send(api, draft, text);
  }

  /** Sends the draft's text and renews it later unless something newer goes first; false when Telegram refuses drafts for this bot. */
  private async send(api: Api, draft: Draft, text: string): Promise<boolean> {
    const { chatId, topicId, botId } = draft.origin;
    draft.pending = undefined;
    draft.lastAt = Date.now();
    this.renewLater(api, draft);
    try {
      // The person may Stop it (Bot API 10): a `stopped_message_generation` cancels the call.
      await api.sendMessageDraft(chatId, draft.draftId, text, {
        can_stop: true,
        ...(topicId === undefined ? {} : { message_thread_id: topicId }),
      });
      draft.shown = text;
      return true;
    } catch (err) {
      if (err instanceof GrammyError && (err.error_code === 400 || err.error_code === 404) && !draft.shown) {
        this.refused.add(botId);
        this.log.info(
          { botId, err: loggableError(err) },
          "telegram: this bot cannot stream drafts; progress is shown as an edited status message",
        );
        return false;
      }
      this.log.debug({ err: loggableError(err), chatId }, "telegram: a progress draft could not be sent");
      return true;
    }
  }

  /** Sends the shown text again before the preview lapses, when nothing newer was sent by then. */
  private renewLater(api: Api, draft: Draft): void {
    clearTimeout(draft.timer);
    draft.timer = setTimeout(() => {
      draft.flushing = draft.flushing.then(async () => {
        if (draft.done || draft.shown === undefined) return;
        await this.send(api, draft, draft.pending ?? draft.shown);
      });
    }, this.timing.keepAliveMs);
    draft.timer.unref();
  }

  private finish(turnId: string, draft: Draft): void {
    draft.done = true;
    clearTimeout(draft.timer);
    this.drafts.delete(turnId);
  }
}

/** The ref a Stop of a draft carries to the running turn (a `stop` event's `progress`). */
export function draftRef(draftId: number): string {
  return `draft:${draftId}`;
}

/** A non-zero 31-bit draft id derived from the turn: the same turn always streams into the same draft. */
export function draftIdOf(turnId: string): number {
  const n = createHash("sha256").update(turnId).digest().readUInt32BE(0) & 0x7fffffff;
  return n === 0 ? 1 : n;
}
