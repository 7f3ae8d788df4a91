import { randomUUID } from "node:crypto";
import type { PlatformSender } from "../core/adapter.js";
import { LeaseLostError, PermanentSendError, SendDeferredError } from "../core/delivery-errors.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import type { TurnOutcome } from "../core/reply.js";
import type { Engine } from "../engine/engine.js";
import type { TurnChannel } from "../engine/turn-channel.js";
import { turnSeconds, turnsTotal } from "../ops/metrics.js";
import { deadLettersTotal, deferralsTotal } from "../ops/metrics.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisRateLimiter } from "../sessions/rate-limiter.js";
import { safeJson, type RedisSessionStore } from "../sessions/session-store.js";
import type { Session } from "../sessions/session.js";
import { requeuedOutcomeOf } from "./dead-letters.js";
import type { QueueScripts } from "./scripts.js";
import { roomScriptKeys, TurnGate, type HeldRoom } from "./turn-gate.js";

/** What the claim (or the previous turn's finish) read for the room's head turn. */
export interface TurnInput {
  head: string;
  session: string | null;
  /** The head turn's record as HGETALL returns it (flat field/value list). */
  record: string[];
  history?: string[];
}

/** Scheduling settings of the turn runner. */
export interface TurnRunnerSettings {
  leaseMs: number;
  /** A turn still waiting this long after its first wait goes to the dead letters. */
  deadlineMs: number;
  /** The longest backoff between delivery retries. */
  retryMaxMs: number;
  /** How long the turn record is kept (longer than the deadline). */
  turnRecordMs: number;
  /** The typing indicator starts only when a turn runs longer than this. */
  typingAfterMs: number;
  idleSeconds: number;
}

/**
 * Tells whether a namespace's tools take the history, so it is read only then;
 * `cachedOnly` answers from the last look without reaching the namespace.
 */
export type HistoryWanted = (namespace: string, cachedOnly?: boolean) => Promise<boolean>;

/**
 * Runs a held room's turns: compute the head turn's outcome (or reuse the one
 * recorded), deliver it through the turn's gate, and end it in one fenced call
 * that also returns the next turn. A turn that must wait, or whose delivery failed,
 * gives the room back (parked until it may resume); nothing is given up silently.
 */
export class TurnRunner {
  constructor(
    private readonly deps: {
      engine: Engine;
      store: RedisSessionStore;
      senders: ReadonlyMap<string, PlatformSender>;
      scripts: QueueScripts;
      keys: Keys;
      limiter: RedisRateLimiter;
      historyWanted: HistoryWanted;
      log: Logger;
      settings: TurnRunnerSettings;
      /** The live channel of a turn (progress, early replies, out-of-band events); none in plain setups. */
      channel?: (event: InboundEvent, sender: PlatformSender) => TurnChannel;
    },
  ) {}

  /** Runs one turn; returns the room's next turn when the worker keeps the room, else undefined. */
  async runOne(held: HeldRoom, input: TurnInput, draining: boolean): Promise<TurnInput | undefined> {
    const { log: baseLog } = this.deps;
    const json = safeJson(input.head);
    const parsed = InboundEventSchema.safeParse(json);
    if (!parsed.success) {
      baseLog.error(
        { room: held.room, issues: parsed.error.issues.slice(0, 3) },
        "unreadable event dropped from inbox",
      );
      return this.finish(held, input.head, undefined, draining, "", "");
    }
    const event = parsed.data;
    const log = baseLog.child({ turn: event.eventId, room: event.room });
    // Adapters refuse strangers at the edge; one queued anyway is dropped without any state.
    if (!this.deps.engine.admits(event)) {
      log.warn({ sender: event.sender.id }, "sender not allowed; dropped");
      return this.finish(held, input.head, undefined, draining, "", "");
    }
    const record = recordOf(input.record, event.eventId);
    const gate = new TurnGate({ ...this.deps, log, platform: event.platform }, held, record);
    const started = Date.now();
    try {
      const sender = this.deps.senders.get(event.platform);
      if (!sender) throw new PermanentSendError(`no sender for platform ${event.platform} in this process`);
      let outcome = this.deps.store.parseOutcome(record.outcome) ?? requeuedOutcomeOf(json);
      let session: Session | undefined;
      const redelivery = outcome !== null;
      if (!outcome) {
        const computed = await this.compute(held, event, input, sender);
        gate.setCommit(this.deps.store.record(event.eventId, computed));
        outcome = computed.outcome;
        session = computed.session;
        log.info({ kind: event.kind, ms: Date.now() - started }, "turn computed");
      }
      if (held.lost) throw new LeaseLostError(held.room);
      const refs = await sender.deliver(event, outcome, { turnId: event.eventId, ledger: gate, log, gate });
      turnsTotal.inc({
        platform: event.platform,
        namespace: event.namespace,
        outcome: redelivery ? "redelivered" : "delivered",
      });
      turnSeconds.observe(
        { platform: event.platform, namespace: event.namespace },
        (Date.now() - started) / 1000,
      );
      const [sessionJson, links] = this.offerLinks(held.room, event, outcome, refs, session, input.session);
      const [commit] = gate.writes();
      return await this.finish(held, input.head, event, draining, sessionJson, links, commit);
    } catch (err) {
      return this.park(held, input, event, gate, err, log);
    }
  }

  private async compute(held: HeldRoom, event: InboundEvent, input: TurnInput, sender: PlatformSender) {
    const { store, historyWanted, settings } = this.deps;
    let stopWorking: (() => void) | undefined;
    const typing = event.sender.allowed
      ? setTimeout(() => (stopWorking = sender.working(event)), settings.typingAfterMs)
      : undefined;
    try {
      const history =
        input.history ?? ((await historyWanted(event.namespace)) ? await store.history(held.room) : []);
      const state = store.parse(held.room, event.namespace, input.session, history);
      const result = await this.deps.engine.run(event, state, this.deps.channel?.(event, sender));
      return {
        session: result.session,
        append: result.append,
        outcome: result.outcome,
        resetHistory: result.resetHistory,
      };
    } finally {
      clearTimeout(typing);
      stopWorking?.();
    }
  }

  /** The session to store again with the offer's message refs, and the ref → offer links. */
  private offerLinks(
    room: string,
    event: InboundEvent,
    outcome: TurnOutcome,
    refs: string[],
    computed: Session | undefined,
    stored: string | null,
  ): [string, string] {
    const offerId = outcome.reply?.offerId;
    const last = refs.at(-1);
    if (!offerId || !last) return ["", ""];
    const session = computed ?? this.deps.store.parse(room, event.namespace, stored, []).session;
    const offer = session.offers.find((o) => o.id === offerId);
    if (offer) offer.messageRefs = [...new Set([...offer.messageRefs, last])];
    return [offer ? JSON.stringify(session) : "", JSON.stringify({ [last]: offerId })];
  }

  private async finish(
    held: HeldRoom,
    head: string,
    event: InboundEvent | undefined,
    draining: boolean,
    sessionJson: string,
    links: string,
    commit = "",
  ): Promise<TurnInput | undefined> {
    const { scripts, keys, settings, historyWanted } = this.deps;
    if (held.lost) return undefined;
    const wantHistory = event ? await historyWanted(event.namespace, true) : false;
    const res = (await scripts.run(
      "rgFinish",
      ...roomScriptKeys(keys, held.room).slice(0, 9),
      held.room,
      held.token,
      commit,
      "",
      head,
      sessionJson,
      links,
      settings.idleSeconds,
      settings.leaseMs,
      draining ? "1" : "",
      wantHistory ? "1" : "",
    )) as [number, string?, (string | null)?, string[]?, string[]?];
    if (res[0] === 0) {
      held.lost = true;
      this.deps.log.warn(
        { room: held.room },
        "room lease lost before the turn's end; another worker continues",
      );
      return undefined;
    }
    if (res[0] === 1) return undefined;
    return {
      head: res[1]!,
      session: res[2] ?? null,
      record: res[3] ?? [],
      ...(wantHistory ? { history: res[4] ?? [] } : {}),
    };
  }

  private async park(
    held: HeldRoom,
    input: TurnInput,
    event: InboundEvent,
    gate: TurnGate,
    err: unknown,
    log: Logger,
  ): Promise<undefined> {
    if (err instanceof LeaseLostError || held.lost) {
      held.lost = true;
      log.warn("room lease lost mid-turn; stopped before any further side effect");
      return undefined;
    }
    const attempts = Number(recordOf(input.record, event.eventId).attempts ?? "0");
    let kind: "wait" | "fail" | "final";
    let delay: number;
    if (err instanceof SendDeferredError) {
      kind = "wait";
      delay = err.waitMs;
      deferralsTotal.inc({
        platform: event.platform,
        reason: err.reason.startsWith("429") ? "429" : "window",
      });
    } else if (err instanceof PermanentSendError) {
      kind = "final";
      delay = 0;
    } else {
      kind = "fail";
      const backoff = Math.min(this.deps.settings.retryMaxMs, 500 * 2 ** attempts);
      delay = backoff / 2 + Math.random() * (backoff / 2);
    }
    const reason = err instanceof Error ? err.message : String(err);
    const [commit, sent] = gate.writes();
    const id = randomUUID();
    const { scripts, keys, settings } = this.deps;
    const res = (await scripts.run(
      "rgPark",
      ...roomScriptKeys(keys, held.room),
      held.room,
      held.token,
      commit,
      sent,
      input.head,
      Math.ceil(delay),
      kind,
      reason.slice(0, 500),
      settings.deadlineMs,
      id,
      settings.turnRecordMs,
    )) as [number, number?, number?];
    held.lost = true;
    if (res[0] === 0) {
      log.warn("room lease lost while parking; another worker continues");
    } else if (res[0] === 2 && kind === "final") {
      deadLettersTotal.inc({ platform: event.platform });
      turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "dead_letter" });
      // A kick, a block, a chat that is gone: an answer the platform refuses for good, not a missed deadline.
      log.warn(
        { refusal: reason, deadLetter: id, attempts: res[2] },
        "turn refused by the platform and no retry can fix it; moved to the dead letters at once",
      );
    } else if (res[0] === 2) {
      deadLettersTotal.inc({ platform: event.platform });
      turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "dead_letter" });
      log.error(
        { err, deadLetter: id, waitedMs: res[1], attempts: res[2] },
        "turn could not be delivered by its deadline; moved to the dead letters (`roomgate dead-letters`)",
      );
    } else if (kind === "fail") {
      turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "failed" });
      log.warn({ err, attempt: res[2] ?? 0, retryInMs: Math.round(delay) }, "turn delivery failed; retrying");
    } else {
      log.debug({ waitMs: Math.round(delay), reason }, "turn waits; room parked");
    }
    return undefined;
  }
}

/** The head turn's record as an object, or an empty one when it belongs to another event. */
function recordOf(flat: string[], eventId: string): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) record[flat[i]!] = flat[i + 1]!;
  return record.id === undefined || record.id === eventId ? record : {};
}
