import { randomUUID } from "node:crypto";
import type { PlatformSender } from "../core/adapter.js";
import { LeaseLostError, PermanentSendError } from "../core/delivery-errors.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import { lazyChild, type Logger } from "../core/log.js";
import type { TurnOutcome } from "../core/reply.js";
import type { Engine } from "../engine/engine.js";
import type { TurnChannel } from "../engine/turn-channel.js";
import { turnSeconds, turnsTotal } from "../ops/metrics.js";
import { deadLettersTotal } from "../ops/metrics.js";
import type { RedisRateLimiter } from "./rate-limiter.js";
import type { CommitRecord } from "./scheduler-args.js";
import { safeJson } from "../core/safe-json.js";
import type { RedisSessionStore } from "./session-store.js";
import { QUARANTINED, requeuedOutcomeOf } from "./dead-letters.js";
import type { RoomLease } from "./room-lease.js";
import { deliverWaitingForSlots, type SlotPause } from "./slot-wait.js";
import { historyCap, turnCommit, type KeptSession } from "./turn-commit.js";
import { TurnGate } from "./turn-gate.js";
import { TurnCompute } from "./turn-compute.js";
import { TurnLifecycle } from "./turn-lifecycle.js";
import { parkTurn } from "./turn-park.js";
import {
  recordOf,
  type HistoryWanted,
  type RecentEvents,
  type TurnInput,
  type TurnResult,
  type TurnRunnerSettings,
} from "./turn-input.js";

/** How a re-queued dead letter's outcome key appears in its inbox entry. */
const REQUEUED_KEY = '"requeuedOutcome"';

/**
 * Runs a held room's turns: compute the head turn's outcome (or reuse the one
 * recorded), deliver it through the turn's gate, and end it in one fenced call
 * that also returns the next turn. A turn that must wait, or whose delivery failed,
 * gives the room back (parked until it may resume); nothing is given up silently.
 * Every write goes through the room's lease.
 */
export class TurnRunner {
  constructor(
    private readonly deps: {
      engine: Engine;
      store: RedisSessionStore;
      senders: ReadonlyMap<string, PlatformSender>;
      limiter: RedisRateLimiter;
      historyWanted: HistoryWanted;
      log: Logger;
      settings: TurnRunnerSettings;
      /** The live channel of a turn (progress, early replies, out-of-band events); none in plain setups. */
      channel?: (event: InboundEvent, sender: PlatformSender) => TurnChannel;
      recent?: RecentEvents;
    },
  ) {
    this.computer = new TurnCompute(deps);
  }

  private readonly computer: TurnCompute;

  /**
   * Runs one turn; returns the room's next turn when the worker keeps the room, and
   * `resumeInMs` when the room was parked to resume that much later. `pause` lets a
   * send slot booked for soon be waited for without parking (src/scheduler/slot-wait.ts).
   */
  async runOne(held: RoomLease, input: TurnInput, draining: boolean, pause?: SlotPause): Promise<TurnResult> {
    const { log: baseLog } = this.deps;
    const turn = new TurnLifecycle();
    let event = this.deps.recent?.(input.head);
    // The head is parsed here only when this process did not queue it itself, or when it
    // may carry a re-queued outcome (the key is written by JSON.stringify, so it appears verbatim).
    const json = !event || input.head.includes(REQUEUED_KEY) ? safeJson(input.head) : undefined;
    if (!event) {
      const parsed = InboundEventSchema.safeParse(json);
      if (!parsed.success) {
        baseLog.error(
          { room: held.room, issues: parsed.error.issues.slice(0, 3) },
          "unreadable event dropped from inbox",
        );
        return this.finish(turn, held, input, undefined, draining);
      }
      event = parsed.data;
    }
    const log = lazyChild(baseLog, { turn: event.eventId, room: event.room });
    // Adapters refuse strangers at the edge; one queued anyway is dropped without any state.
    if (!this.deps.engine.admits(event)) {
      log.warn({ sender: event.sender.id }, "sender not allowed; dropped");
      return this.finish(turn, held, input, undefined, draining);
    }
    const record = recordOf(input.record, event.eventId);
    const gate = new TurnGate(
      { limiter: this.deps.limiter, log, platform: event.platform },
      held,
      record,
      turn,
    );
    const started = Date.now();
    try {
      const sender = this.deps.senders.get(event.platform);
      if (!sender) throw new PermanentSendError(`no sender for platform ${event.platform} in this process`);
      let outcome =
        this.deps.store.parseOutcome(record.outcome) ?? (json === undefined ? null : requeuedOutcomeOf(json));
      let kept: KeptSession | undefined;
      const redelivery = outcome !== null;
      // A set-aside turn's record says why, so a retried delivery still dead-letters it after.
      let quarantine = record.quarantine;
      if (!outcome) {
        const computed = await this.computer.run(held, event, input, sender, record, log);
        const built = turnCommit(event.eventId, computed, input.kept, this.deps.store.settings);
        gate.setCommit({
          ...built.commit,
          ...(computed.quarantine ? { quarantine: computed.quarantine } : {}),
        });
        outcome = computed.outcome;
        kept = built.kept;
        quarantine = computed.quarantine;
        log.debug({ kind: event.kind, ms: Date.now() - started }, "turn computed");
      }
      if (held.lost) throw new LeaseLostError(held.room);
      const context = { turnId: event.eventId, ledger: gate, log, gate };
      const delivered = outcome;
      const refs = await deliverWaitingForSlots(
        () => sender.deliver(event, delivered, context),
        gate,
        held,
        draining ? undefined : pause,
      );
      // Everything is sent: the finish records it, fenced, even while the lease is unconfirmed.
      if (held.taken) throw new LeaseLostError(held.room);
      if (quarantine) return await this.setAside(turn, held, input, event, gate, quarantine, log);
      turnsTotal.inc({
        platform: event.platform,
        namespace: event.namespace,
        outcome: redelivery ? "redelivered" : "delivered",
      });
      turnSeconds.observe(
        { platform: event.platform, namespace: event.namespace },
        (Date.now() - started) / 1000,
      );
      const links = this.offerLinks(held.room, event, outcome, refs, kept, input);
      return await this.finish(turn, held, input, event, draining, {
        commit: gate.pendingCommit(),
        kept: links.kept ?? kept,
        session: links.session,
        offerLinks: links.links,
      });
    } catch (err) {
      return parkTurn(this.deps.settings, turn, held, input, event, gate, err, log);
    }
  }

  /** Dead-letters a turn whose one line was delivered: it must not be computed again. */
  private async setAside(
    turn: TurnLifecycle,
    held: RoomLease,
    input: TurnInput,
    event: InboundEvent,
    gate: TurnGate,
    why: string,
    log: Logger,
  ): Promise<TurnResult> {
    const id = randomUUID();
    const reply = await held.park({
      writes: gate.writes(),
      head: input.head,
      delayMs: 0,
      verdict: "dead",
      reason: `${QUARANTINED}${why}`,
      deadlineMs: this.deps.settings.deadlineMs,
      letterId: id,
    });
    if (reply.kind !== "dead") {
      turn.to(reply.kind === "over" ? "finished" : reply.kind === "lost" ? "lost" : "parked");
      return {};
    }
    turn.to("dead-lettered");
    deadLettersTotal.inc({ platform: event.platform });
    turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "dead_letter" });
    log.warn({ deadLetter: id, why }, "turn set aside: its sender was told; it is in the dead letters");
    return {};
  }

  /**
   * The offer's message refs, when the reply carried an offer: the session to store
   * again with them (and keep), and the ref → offer links.
   */
  private offerLinks(
    room: string,
    event: InboundEvent,
    outcome: TurnOutcome,
    refs: string[],
    computed: KeptSession | undefined,
    input: TurnInput,
  ): { session?: string; links?: Record<string, string>; kept?: KeptSession } {
    const offerId = outcome.reply?.offerId;
    const last = refs.at(-1);
    if (!offerId || !last) return {};
    const session = computed?.session ?? this.computer.sessionOf(room, event.namespace, input);
    const offer = session.offers.find((o) => o.id === offerId);
    if (!offer) return { links: { [last]: offerId } };
    offer.messageRefs = [...new Set([...offer.messageRefs, last])];
    const json = JSON.stringify(session);
    return { session: json, links: { [last]: offerId }, kept: { session, json, writtenAt: Date.now() } };
  }

  private async finish(
    turn: TurnLifecycle,
    held: RoomLease,
    input: TurnInput,
    event: InboundEvent | undefined,
    draining: boolean,
    end: {
      commit?: CommitRecord | undefined;
      kept?: KeptSession | undefined;
      session?: string | undefined;
      offerLinks?: Record<string, string> | undefined;
    } = {},
  ): Promise<TurnResult> {
    const { settings, historyWanted, store } = this.deps;
    if (held.taken) {
      turn.to("lost");
      return {};
    }
    const wantHistory = event ? await historyWanted(event.namespace, true) : false;
    const reply = await held.finish({
      head: input.head,
      ...(end.commit ? { commit: end.commit } : {}),
      ...(end.session ? { session: end.session } : {}),
      ...(end.offerLinks ? { offerLinks: end.offerLinks } : {}),
      idleSeconds: settings.idleSeconds,
      draining,
      wantHistory,
      historyCap: historyCap(store.settings),
    });
    if (reply.kind === "lost") {
      turn.to("lost");
      this.deps.log.warn(
        { room: held.room },
        "room lease lost before the turn's end; another worker continues",
      );
      return {};
    }
    turn.to("finished");
    if (reply.kind === "released") return {};
    // Sent again after its reply was lost: the next turn starts from what Redis has.
    const kept = reply.again ? undefined : (end.kept ?? input.kept);
    return {
      next: {
        head: reply.head,
        session: reply.again ? (reply.session ?? null) : null,
        record: reply.again ? (reply.record ?? {}) : { computing: "1" },
        ...(wantHistory ? { history: reply.history } : {}),
        now: reply.now,
        ...(kept ? { kept } : {}),
      },
    };
  }
}
