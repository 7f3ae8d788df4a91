import type { ProgressUpdate } from "./progress.js";
import { sleep } from "./retry.js";

/** How one platform shows a status message: post it once, then replace its text. */
export interface StatusIo<Ref> {
  /** Edits of statuses sharing this key are spaced together (a Telegram chat; a Matrix status itself). */
  space: string;
  /** Sends the status message; resolves to what `edit` needs to replace it. */
  post(text: string): Promise<Ref>;
  /** Replaces the status message's text; `seq` counts the edits from 1. */
  edit(ref: Ref, text: string, seq: number): Promise<void>;
}

interface Status<Ref> {
  space: string;
  ref: Ref | undefined;
  seq: number;
  /** The newest text not yet shown, flushed when the space may be edited again. */
  pending: string | undefined;
  /** A flush is on the chain and has not read `pending` yet: newer text only replaces `pending`. */
  queued: boolean;
  chain: Promise<void>;
}

/**
 * A running call's status message on any platform: posted on the first update, then
 * edited in place no more than once per `everyMs` per space, the latest text winning;
 * `done` waits until the final text is shown. Platforms differ only in `StatusIo`.
 */
export class ThrottledStatus<Ref> {
  private readonly statuses = new Map<string, Status<Ref>>();
  private readonly lastEdit = new Map<string, number>();

  constructor(private readonly everyMs: number) {}

  /** Shows one update: the first posts the status message, later ones edit it. */
  async update(update: ProgressUpdate, io: StatusIo<Ref>): Promise<void> {
    let status = this.statuses.get(update.key);
    if (!status) {
      status = {
        space: io.space,
        ref: undefined,
        seq: 0,
        pending: undefined,
        queued: false,
        chain: Promise.resolve(),
      };
      this.statuses.set(update.key, status);
      status.ref = await io.post(update.text);
      this.lastEdit.set(io.space, Date.now());
      if (update.done) this.forget(update.key, io.space);
      return;
    }
    status.pending = update.text;
    // One flush waiting is enough however fast updates come (a server's progress flood):
    // it shows the newest text when it runs, so the chain does not grow per update.
    if (!status.queued) {
      status.queued = true;
      const current = status;
      status.chain = status.chain.then(() => this.flush(current, io));
    }
    if (update.done) {
      try {
        await status.chain;
      } finally {
        this.forget(update.key, io.space);
      }
    }
  }

  private async flush(status: Status<Ref>, io: StatusIo<Ref>): Promise<void> {
    if (status.pending !== undefined && status.ref !== undefined) {
      const wait = (this.lastEdit.get(io.space) ?? 0) + this.everyMs - Date.now();
      if (wait > 0) await sleep(wait);
    }
    status.queued = false;
    // Several updates may have come in while waiting: only the newest is shown.
    const text = status.pending;
    if (text === undefined || status.ref === undefined) return;
    status.pending = undefined;
    this.lastEdit.set(io.space, Date.now());
    status.seq += 1;
    await io.edit(status.ref, text, status.seq);
  }

  /**
   * A finished status is forgotten, and its space's last edit once no status uses it:
   * the next status posts a new message first, which spaces its edits again.
   */
  private forget(key: string, space: string): void {
    this.statuses.delete(key);
    if (![...this.statuses.values()].some((s) => s.space === space)) this.lastEdit.delete(space);
  }
}
