import type { Logger } from "./log.js";
import { StartError } from "./start-failure.js";

/**
 * One part a roomgate process runs (the Telegram poller, the Matrix sync, the
 * workers, the lease renewals, the proactive queue, the health server …): started in
 * order, stopped in the reverse order, and asked by /healthz whether it is stuck. The
 * Redis clients a part holds are handles whose client underneath is replaced when it
 * ends or stops answering (ClientWatch), so a part carries on with a new client
 * without being restarted.
 */
export interface RuntimePart {
  /** How logs and /healthz name it. */
  readonly name: string;
  start(): Promise<void>;
  /** Stops it; running work may take up to `graceMs` to finish. */
  stop(graceMs: number): Promise<void>;
  /** Why it cannot do its work right now, for /healthz; undefined while it works. */
  stuck?(): string | undefined;
}

/** A part that is stuck, and why. */
export interface StuckPart {
  part: string;
  reason: string;
}

/** The parts of a process: each started in turn; on stop, the started ones in the reverse order. */
export class PartList {
  private readonly started: RuntimePart[] = [];

  constructor(private readonly log: Logger) {}

  /** Starts `part` after the ones before it; one that fails to start is stopped with the rest (its stop copes). */
  async start(part: RuntimePart): Promise<void> {
    this.started.push(part);
    try {
      await part.start();
    } catch (err) {
      // Named by its part, in one line (no stack): a port taken, a name not found.
      throw StartError.of(part.name, err);
    }
  }

  /** Stops every started part, the last started first; a part that fails to stop does not hold up the rest. */
  async stop(graceMs: number): Promise<void> {
    for (const part of this.started.splice(0).reverse()) {
      await part
        .stop(graceMs)
        .catch((err: unknown) => this.log.warn({ err, part: part.name }, "a part did not stop cleanly"));
    }
  }

  /** The started parts that say they are stuck. */
  stuck(): StuckPart[] {
    return this.started.flatMap((part) => {
      const reason = part.stuck?.();
      return reason === undefined ? [] : [{ part: part.name, reason }];
    });
  }
}
