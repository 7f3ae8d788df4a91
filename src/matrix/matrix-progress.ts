import type { ProgressUpdate } from "../core/progress.js";
import { ThrottledStatus } from "../core/throttled-status.js";

/** Edits of one status message are spaced at least this far apart. */
export const EDIT_EVERY_MS = 2000;

/** Sends a new event (content) or, with `replaces`, an edit of that event; resolves to the event id. */
export type StatusSend = (
  content: Record<string, unknown>,
  seq: number,
  replaces?: string,
) => Promise<string>;

/**
 * A running call's status message in a Matrix room: an `m.notice` on the first
 * update, then `m.replace` edits (the latest text winning, at most one per
 * EDIT_EVERY_MS), the last one on `done`.
 */
export class MatrixProgress {
  private readonly status = new ThrottledStatus<string>(EDIT_EVERY_MS);

  /**
   * Shows one update through `send`. `relation` places the first notice (in the
   * question's thread); its edits follow it there by `m.replace` alone.
   */
  async update(update: ProgressUpdate, send: StatusSend, relation?: Record<string, unknown>): Promise<void> {
    await this.status.update(update, {
      space: update.key,
      post: (text) =>
        send({ msgtype: "m.notice", body: text, ...(relation ? { "m.relates_to": relation } : {}) }, 0),
      edit: async (eventId, text, seq) => {
        await send(
          {
            msgtype: "m.notice",
            body: `* ${text}`,
            "m.new_content": { msgtype: "m.notice", body: text },
            "m.relates_to": { rel_type: "m.replace", event_id: eventId },
          },
          seq,
          eventId,
        );
      },
    });
  }
}
