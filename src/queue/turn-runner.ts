import type { PlatformSender } from "../core/adapter.js";
import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import type { Engine } from "../engine/engine.js";
import type { TurnChannel } from "../engine/turn-channel.js";
import { turnSeconds, turnsTotal } from "../ops/metrics.js";
import type { RedisSessionStore } from "../sessions/session-store.js";

/**
 * Runs one turn so that a retry is safe: the outcome is computed and committed with
 * the session once, then delivered through the ledger, so a worker that dies at any
 * point neither loses the answer nor sends it twice.
 */
export class TurnRunner {
  constructor(
    private readonly engine: Engine,
    private readonly store: RedisSessionStore,
    private readonly senders: ReadonlyMap<string, PlatformSender>,
    private readonly log: Logger,
    /** The live channel of a turn (progress, early replies, out-of-band events); none in plain setups. */
    private readonly channel?: (event: InboundEvent, sender: PlatformSender) => TurnChannel,
  ) {}

  /** Handles one event to the end: compute (or reuse) its outcome, then deliver it. */
  async run(event: InboundEvent): Promise<void> {
    const log = this.log.child({ turn: event.eventId, room: event.room });
    const sender = this.senders.get(event.platform);
    if (!sender) throw new Error(`no sender for platform ${event.platform} in this process`);
    const started = Date.now();
    let outcome = await this.store.outcome(event.room, event.eventId);
    const redelivery = outcome !== null;
    if (outcome) {
      log.info("turn outcome found; delivering again");
    } else {
      const stopWorking = event.sender.allowed ? sender.working(event) : () => undefined;
      try {
        const state = await this.store.load(event.room, event.namespace);
        const channel = this.channel?.(event, sender);
        const result = await this.engine.run(event, state, channel);
        await this.store.commit(event.room, event.eventId, result);
        outcome = result.outcome;
      } finally {
        stopWorking();
      }
      log.info({ kind: event.kind, ms: Date.now() - started }, "turn computed");
    }
    let refs: string[];
    try {
      refs = await sender.deliver(event, outcome, {
        turnId: event.eventId,
        ledger: this.store.ledger(event.room, event.eventId),
        log,
      });
    } catch (err) {
      turnsTotal.inc({ platform: event.platform, result: "failed" });
      throw err;
    }
    turnsTotal.inc({ platform: event.platform, result: redelivery ? "redelivered" : "delivered" });
    turnSeconds.observe({ platform: event.platform }, (Date.now() - started) / 1000);
    const offerId = outcome.reply?.offerId;
    const last = refs.at(-1);
    if (offerId && last) await this.store.linkOffer(event.room, offerId, [last]);
  }
}
