import { randomUUID } from "node:crypto";
import type { DeliveryLedger, SendGate, SendWindow } from "../core/adapter.js";
import { LeaseLostError, SendDeferredError } from "../core/delivery-errors.js";
import type { Logger } from "../core/log.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisRateLimiter } from "../sessions/rate-limiter.js";
import type { CommitRecord } from "../sessions/session-store.js";
import { resentUnknownPartsTotal } from "../ops/metrics.js";
import { laneOf } from "./lanes.js";
import type { QueueScripts } from "./scripts.js";

/** The room a worker holds: its lease token, and whether the worker knows it lost it. */
export interface HeldRoom {
  room: string;
  token: string;
  lost: boolean;
}

/** The fenced keys of one room's scripts, in the order the scripts take them. */
export function roomScriptKeys(keys: Keys, room: string): string[] {
  const lane = laneOf(room);
  return [
    keys.lease(room),
    keys.running(lane),
    keys.session(room),
    keys.history(room),
    keys.offerRefs(room),
    keys.turn(room),
    keys.inbox(room),
    keys.pending(lane),
    keys.wake(lane),
    keys.deadLetters,
    keys.deadLetterIndex,
  ];
}

/**
 * Waits shorter than this are waited out in the worker; longer ones give the slot back.
 * Not a setting: parking costs about two round trips and a claim, so a wait shorter
 * than that is cheaper to sleep through; anything longer must not hold a worker (DESIGN §8).
 */
const PARK_AFTER_MS = 20;

/**
 * One turn's ledger and send gate: what was sent is read from the turn record the
 * claim returned, and every write (the turn's commit, parts sent) is buffered and
 * carried by the next fenced script — the reservation of the next send, or the
 * turn's finish — so that a turn costs few round trips and nothing is written by
 * a worker that lost the room.
 */
export class TurnGate implements DeliveryLedger, SendGate {
  private commit: CommitRecord | undefined;
  private sent: Record<string, string> = {};
  private warned = new Set<string>();

  constructor(
    private readonly deps: {
      scripts: QueueScripts;
      keys: Keys;
      limiter: RedisRateLimiter;
      /** The turn's logger (its turn id and room bound). */
      log: Logger;
      platform: string;
    },
    private readonly held: HeldRoom,
    private readonly record: Record<string, string>,
  ) {}

  /** Buffers the turn's commit; it is written before the first send, or with the finish. */
  setCommit(commit: CommitRecord): void {
    this.commit = commit;
  }

  /** The buffered writes as script arguments (commit JSON, sent JSON), "" when none. */
  writes(): [string, string] {
    return [
      this.commit ? JSON.stringify(this.commit) : "",
      Object.keys(this.sent).length > 0 ? JSON.stringify(this.sent) : "",
    ];
  }

  /** Forgets buffered writes once a script applied them. */
  written(): void {
    this.commit = undefined;
    this.sent = {};
  }

  async get(partKey: string): Promise<string | null> {
    const done = this.sent[partKey] ?? this.record[`part:${partKey}`];
    if (done !== undefined) return done;
    const mark = this.record[`sending:${partKey}`];
    if (mark !== undefined && !this.warned.has(partKey)) {
      // Telegram has no idempotency key: an attempt whose answer was never recorded (a 429, a
      // timeout, a worker that died) is sent again, which duplicates it only if it had arrived.
      // The mark names when and by which worker that attempt was made, so that an operator (or
      // the fault script) can tell this window from an unexplained duplicate.
      this.warned.add(partKey);
      resentUnknownPartsTotal.inc({ platform: this.deps.platform });
      this.deps.log.info(
        { part: partKey, ...attemptOf(mark) },
        "an earlier attempt of this part has no recorded answer; sending it again",
      );
    }
    return null;
  }

  async set(partKey: string, messageRef: string): Promise<void> {
    this.sent[partKey] = messageRef;
  }

  async reserve(windows: SendWindow[], partKey?: string): Promise<void> {
    const { scripts, keys } = this.deps;
    const fenced = roomScriptKeys(keys, this.held.room).slice(0, 6);
    for (;;) {
      if (this.held.lost) throw new LeaseLostError(this.held.room);
      const [commit, sent] = this.writes();
      const res = (await scripts.run(
        "rgStep",
        6 + windows.length,
        ...fenced,
        ...windows.map((w) => w.key),
        this.held.room,
        this.held.token,
        commit,
        sent,
        partKey ?? "",
        randomUUID(),
        ...windows.flatMap((w) => [w.max, w.windowMs]),
      )) as [number, number?];
      if (res[0] === 0) {
        this.held.lost = true;
        throw new LeaseLostError(this.held.room);
      }
      this.written();
      if (res[0] === 1) return;
      const wait = Number(res[1]);
      if (wait > PARK_AFTER_MS) throw new SendDeferredError(wait, "send window full");
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  async hold(windows: SendWindow[], ms: number): Promise<void> {
    await this.deps.limiter.hold(windows, ms);
  }
}

/**
 * Reads a `sending:` mark ("<redis ms> <lease token>") into log fields: when the earlier
 * attempt was reserved and by which worker (the token without its claim counter).
 */
export function attemptOf(mark: string): { earlierAttemptAt?: number; earlierAttemptBy?: string } {
  const [at, token] = mark.split(" ");
  const by = token?.slice(0, token.lastIndexOf(":"));
  return { earlierAttemptAt: Number(at), ...(by ? { earlierAttemptBy: by } : {}) };
}
