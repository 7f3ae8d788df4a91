import type { PlatformSender } from "../core/adapter.js";
import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import type { TurnOutcome } from "../core/reply.js";
import type { Engine } from "../engine/engine.js";
import type { TurnChannel } from "../engine/turn-channel.js";
import type { RedisSessionStore } from "./session-store.js";
import type { HistoryEntry, Session } from "../sessions/session.js";
import type { RoomLease } from "./room-lease.js";
import { verdictOf } from "./turn-lifecycle.js";
import { waitedOf, type HistoryWanted, type TurnInput, type TurnRunnerSettings } from "./turn-input.js";

/** What a computed (or set-aside) turn gives its delivery and commit. */
export interface ComputedTurn {
  session: Session;
  append: HistoryEntry[];
  outcome: TurnOutcome;
  resetHistory?: boolean;
  /** Why the turn is set aside (its line is delivered, then it goes to the dead letters), if it is. */
  quarantine?: string;
}

/**
 * A turn's computation: the engine run on the room's session (the one this holder
 * kept, else the one the claim read) and history, with the typing indicator; or its
 * one line when the computation cannot be done (the verdict table's "line").
 */
export class TurnCompute {
  constructor(
    private readonly deps: {
      engine: Engine;
      store: RedisSessionStore;
      historyWanted: HistoryWanted;
      settings: TurnRunnerSettings;
      channel?: (event: InboundEvent, sender: PlatformSender) => TurnChannel;
    },
  ) {}

  /**
   * Computes the turn, or sets it aside when it is what kills: a computation cut short
   * by its process dying `maxComputeDeaths` times, or a message that crashed the
   * namespace twice. A set-aside turn's outcome is the one line its sender gets; it is
   * committed like any outcome (a retry delivers it, never computes again) and the turn
   * then goes to the dead letters. A namespace that is restarting makes the room wait
   * for it (a park), for at most NAMESPACE_WAIT_MS, then the person gets its line.
   */
  async run(
    held: RoomLease,
    event: InboundEvent,
    input: TurnInput,
    sender: PlatformSender,
    record: Record<string, string>,
    log: Logger,
  ): Promise<ComputedTurn> {
    const stored = () => this.sessionOf(held.room, event.namespace, input);
    const line = (text: string, quarantine?: string) => ({
      session: stored(),
      append: [],
      outcome: { reply: { blocks: [{ type: "text" as const, text }], options: [] } },
      ...(quarantine ? { quarantine } : {}),
    });
    const deaths = Number(record.computing ?? "1") - 1;
    if (deaths >= this.deps.settings.maxComputeDeaths) {
      const why = `its computation was cut short ${deaths} times by the worker process dying`;
      log.error({ deaths }, `turn set aside: ${why}`);
      return line(poisonTexts.processDied, why);
    }
    try {
      return await this.compute(held, event, input, sender);
    } catch (err) {
      const verdict = verdictOf(err, {
        attempts: Number(record.attempts ?? "0"),
        waitedMs: waitedOf(input, record),
        retryMaxMs: this.deps.settings.retryMaxMs,
        computing: true,
      });
      if (verdict.verdict !== "line") throw err;
      if (verdict.setAside) log.error({ err }, `turn set aside: ${verdict.setAside}`);
      else log.warn({ err }, "namespace still restarting after the longest wait; its line is sent");
      return line(verdict.text, verdict.setAside);
    }
  }

  private async compute(held: RoomLease, event: InboundEvent, input: TurnInput, sender: PlatformSender) {
    const { store, historyWanted, settings } = this.deps;
    let stopWorking: (() => void) | undefined;
    const typing = event.sender.allowed
      ? setTimeout(() => (stopWorking = sender.working(event)), settings.typingAfterMs)
      : undefined;
    try {
      const history =
        input.history ?? ((await historyWanted(event.namespace)) ? await store.history(held.room) : []);
      // The session this holder kept is its own, written under its lease: not parsed again.
      const kept = input.kept?.session.namespace === event.namespace ? input.kept.session : undefined;
      const state = kept
        ? { session: kept, history: store.parseHistory(history) }
        : store.parse(held.room, event.namespace, input.session, history);
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

  /** The room's session as this holder has it: the one it kept, else the one read with the claim. */
  sessionOf(room: string, namespace: string, input: TurnInput): Session {
    if (input.kept?.session.namespace === namespace) return input.kept.session;
    return this.deps.store.parse(room, namespace, input.session, []).session;
  }
}

/** What a person is told when their message is set aside. */
const poisonTexts = {
  processDied:
    "This message was set aside: working on it stopped the worker more than once, so it is not tried again. " +
    "The other conversations go on, and an operator can look at it.",
};
