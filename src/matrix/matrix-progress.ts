import type { ProgressUpdate } from "../core/progress.js";

/** Edits of one status message are spaced at least this far apart. */
export const EDIT_EVERY_MS = 2000;

/** Sends a new event (content) or, with `replaces`, an edit of that event; resolves to the event id. */
export type StatusSend = (
  content: Record<string, unknown>,
  seq: number,
  replaces?: string,
) => Promise<string>;

interface Status {
  eventId: string | undefined;
  seq: number;
  pending: string | undefined;
  lastEdit: number;
  chain: Promise<void>;
}

/**
 * A running call's status message in a Matrix room: an `m.notice` on the first
 * update, then `m.replace` edits (the latest text winning, at most one per
 * EDIT_EVERY_MS), the last one on `done`.
 */
export class MatrixProgress {
  private readonly statuses = new Map<string, Status>();

  constructor(private readonly everyMs = EDIT_EVERY_MS) {}

  /** Shows one update through `send`. */
  async update(update: ProgressUpdate, send: StatusSend): Promise<void> {
    let status = this.statuses.get(update.key);
    if (!status) {
      status = {
        eventId: undefined,
        seq: 0,
        pending: undefined,
        lastEdit: Date.now(),
        chain: Promise.resolve(),
      };
      this.statuses.set(update.key, status);
      status.eventId = await send({ msgtype: "m.notice", body: update.text }, 0);
      if (update.done) this.statuses.delete(update.key);
      return;
    }
    status.pending = update.text;
    const current = status;
    status.chain = status.chain.then(() => this.flush(current, send));
    if (update.done) {
      await status.chain;
      this.statuses.delete(update.key);
    }
  }

  private async flush(status: Status, send: StatusSend): Promise<void> {
    if (status.pending === undefined || status.eventId === undefined) return;
    const wait = status.lastEdit + this.everyMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const text = status.pending;
    if (text === undefined) return;
    status.pending = undefined;
    status.lastEdit = Date.now();
    status.seq += 1;
    await send(
      {
        msgtype: "m.notice",
        body: `* ${text}`,
        "m.new_content": { msgtype: "m.notice", body: text },
        "m.relates_to": { rel_type: "m.replace", event_id: status.eventId },
      },
      status.seq,
      status.eventId,
    );
  }
}
