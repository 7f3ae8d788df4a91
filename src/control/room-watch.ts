import type { InboundEvent } from "../core/event.js";
import type { QueuedEvents } from "../engine/turn-channel.js";
import type { RoomInboxReader } from "../scheduler/room-inbox-reader.js";
import type { RoomSignals } from "../scheduler/room-signals.js";

/**
 * The events queued behind one running turn, read from the room's inbox when a signal
 * says something came (RoomSignals), and every `recheckMs` in case a signal was lost.
 * Only events from allowed senders, never the turn's own.
 */
export class RoomWatch implements QueuedEvents {
  private generation = 0;
  private readonly wakers = new Set<() => void>();
  private readonly buffered: InboundEvent[] = [];
  private closed = false;

  private constructor(
    private readonly own: InboundEvent,
    private readonly inbox: RoomInboxReader,
    private readonly recheckMs: number,
    private cursor: number,
    private unlisten: () => void,
  ) {}

  /**
   * Starts watching: listening first, then the position read, so nothing queued in
   * between goes unnoticed. From after the turn's own event (`turn`), or after what is
   * queued now (`now`: answers to a question about to be asked).
   */
  static async open(
    own: InboundEvent,
    from: "turn" | "now",
    inbox: RoomInboxReader,
    signals: RoomSignals,
    recheckMs: number,
  ): Promise<RoomWatch> {
    let watch: RoomWatch | undefined;
    const unlisten = await signals.listen(own.room, () => watch?.poke());
    try {
      const cursor = await inbox.position(own.room, from === "turn" ? own.eventId : undefined);
      watch = new RoomWatch(own, inbox, recheckMs, cursor, unlisten);
      return watch;
    } catch (err) {
      unlisten();
      throw err;
    }
  }

  async next(signal: AbortSignal, until?: number): Promise<InboundEvent | undefined> {
    while (!signal.aborted && !this.closed && (until === undefined || Date.now() < until)) {
      const seen = this.generation;
      if (this.buffered.length === 0) await this.read();
      const event = this.buffered.shift();
      if (event) return event;
      await this.changed(seen, signal, until);
    }
    return undefined;
  }

  close(): void {
    this.closed = true;
    this.unlisten();
    this.unlisten = () => undefined;
    this.poke();
  }

  private async read(): Promise<void> {
    for (const { next, event } of await this.inbox.after(this.own.room, this.cursor)) {
      this.cursor = next;
      if (event.eventId !== this.own.eventId && event.sender.allowed) this.buffered.push(event);
    }
  }

  private poke(): void {
    this.generation += 1;
    for (const wake of [...this.wakers]) wake();
  }

  /** Resolves on a signal since `seen`, an abort, `until`, or the next recheck. */
  private changed(seen: number, signal: AbortSignal, until: number | undefined): Promise<void> {
    if (this.generation !== seen) return Promise.resolve();
    return new Promise((resolve) => {
      const wait = Math.min(this.recheckMs, until === undefined ? Infinity : Math.max(0, until - Date.now()));
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, wait);
      signal.addEventListener("abort", done, { once: true });
      this.wakers.add(done);
    });
  }
}
