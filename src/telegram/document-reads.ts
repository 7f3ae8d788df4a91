import type { Logger } from "../core/log.js";
import { loggableError } from "./loggable-error.js";

/** Document reads in flight, one chain per chat so that a chat's files keep their order. */
export class DocumentReads {
  private readonly chains = new Map<number, Promise<void>>();

  constructor(private readonly log: Logger) {}

  /** Runs `task` after the chat's earlier reads; a failure is logged, and the chain goes on. */
  later(chatId: number, updateId: number, task: () => Promise<void>): void {
    const next = (this.chains.get(chatId) ?? Promise.resolve())
      .then(task)
      .catch((err: unknown) =>
        this.log.error({ err: loggableError(err), updateId }, "telegram: a document could not be queued"),
      )
      .finally(() => {
        if (this.chains.get(chatId) === next) this.chains.delete(chatId);
      });
    this.chains.set(chatId, next);
  }

  /** Waits for the reads in flight, so a stop does not lose one half-read. */
  async drain(): Promise<void> {
    await Promise.all(this.chains.values());
  }
}
