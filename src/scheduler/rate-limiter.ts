import { randomUUID } from "node:crypto";
import type { SendWindow } from "../core/adapter.js";
import { sleep } from "../core/retry.js";
import { NO_WAIT, type Durability } from "./durable-write.js";
import type { NoticeMarks } from "./notice-marks.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { schedulerKeysOf, type KeyLayout } from "./scheduler-keys.js";
import type { Mode } from "./reserve-slot-script.js";
import { BUSY_KEYS_KEPT, SlotCalls } from "./slot-calls.js";

/** A slot this close is waited for in the process and sent without asking Redis again. */
const SOON_MS = 20;

/** Slot calls whose round trips make the baseline a reply's lateness is measured from. */
const RTT_SAMPLES = 32;

/** A reply later than this past its call's usual round trip is a slot that may have gone by. */
const LATE_REPLY_MS = 50;

/**
 * What the slot script answers: ms until the slot (0 = now) and whether a window is
 * half full; and how much later than usual the answer came (`lateMs`). The slot is
 * taken when the script runs, at the start of the call: an answer held up (a WAIT for
 * a replica catching up after a failover, a stalled event loop) comes after the slot,
 * by as much as it was held up.
 */
export interface SlotReply {
  waitMs: number;
  tight: boolean;
  lateMs: number;
}

/** A slot taken by `acquire`: pass it to `answered` once the request was answered. */
export interface Slot {
  windows: SendWindow[];
  member: string;
  tight: boolean;
}

/**
 * A send limiter shared by every process through Redis, on Redis' own clock (TIME
 * inside the script): a send takes a slot in each of its windows (per bot, per
 * chat, per group) now, or books the earliest one later and waits for it. Each slot
 * counts from when its request may leave until the request is answered; then it
 * counts from that moment, when the request had certainly arrived, so that however
 * late a loaded worker's request leaves, the platform never sees more than a window
 * allows. A turn's sends take their slots through its gate (src/scheduler/turn-gate.ts),
 * right after the fenced turn step.
 *
 * Every window write waits for the replicas `durability` names (WAIT, in the same round
 * trip), and a slot is handed out only once they have it: a master killed right after
 * a send is replaced by a replica that counts that send, so a failover never lets the
 * platform see more than a window allows.
 */
export class RedisRateLimiter {
  /** Per window key, until when (local ms) this process expects a booking there to wait. */
  private readonly busyUntil = new Map<string, number>();
  /** Round trips of the last RTT_SAMPLES slot calls, ms. */
  private readonly rtts: number[] = [];

  /** The calls of reserve-slot.lua: direct, gated, or through the window fallback. */
  private readonly slots: SlotCalls;

  constructor(redis: RedisClient, layout: KeyLayout, durability: Durability = NO_WAIT) {
    this.slots = new SlotCalls(redis, schedulerKeysOf(layout), durability);
  }

  /** The receivers' marks that their notices sent without a slot are in the windows (notice-marks.ts). */
  get noticeMarks(): NoticeMarks {
    return this.slots.noticeMarks;
  }

  private keyOf(w: SendWindow): string {
    return this.slots.keyOf(w);
  }

  private async call(
    windows: SendWindow[],
    member: string,
    mode: Mode,
    ms = 0,
    once = false,
  ): Promise<SlotReply> {
    const slots = this.slots;
    let reply: { waitMs: number; tight: boolean; rttMs: number; viaFallback?: true };
    if (!slots.fallback.applies(windows))
      reply = await slots.direct(windows, member, mode, ms, { gate: false, once });
    else if (mode === "answered" || mode === "hold" || mode === "past") {
      if (mode !== "past" && (await slots.recordViaFallback(windows, member, mode, ms)))
        return { waitMs: 0, tight: false, lateMs: 0 };
      reply = await slots.direct(windows, member, mode, ms, { gate: true, once });
      await slots.mirror.record(windows, member, mode, ms);
    } else {
      await slots.mirror.start(windows[0]!);
      reply = await slots.gatedOrFallback(windows, member, mode, ms, once);
      // A send leaving now through the bot's windows: copied for the fallback first
      // (group-mirror.ts), the copy's round trip counted in the reply's lateness; an
      // outage notice (`once`) does not wait for it.
      if (!reply.viaFallback && reply.waitMs <= (mode === "take" ? 0 : Math.min(ms, 100))) {
        const startedAt = Date.now();
        const copied = slots.mirror.record(windows, member, "sent", reply.waitMs);
        if (!once) {
          await copied;
          reply = { ...reply, rttMs: reply.rttMs + Date.now() - startedAt };
        }
      }
    }
    if (mode !== "answered" && mode !== "past")
      this.note(windows, mode === "hold" ? ms : reply.waitMs, mode !== "hold" && reply.tight);
    return { waitMs: reply.waitMs, tight: reply.tight, lateMs: this.lateness(reply.rttMs) };
  }

  /** How much longer than the fastest of the recent slot calls one took (0 when not). */
  private lateness(rttMs: number): number {
    this.rtts.push(rttMs);
    if (this.rtts.length > RTT_SAMPLES) this.rtts.shift();
    return Math.max(0, rttMs - Math.min(...this.rtts));
  }

  /**
   * Whether this process expects a slot in every window now: none of its own replies
   * since said a window is half full, booked for later, held for a 429, or took the
   * one slot of a one-send window (a chat's 1 a second). A guess, not a promise: other
   * processes send too, and the booking decides.
   */
  expectsSlotNow(windows: SendWindow[]): boolean {
    const now = Date.now();
    return windows.every((w) => (this.busyUntil.get(this.keyOf(w)) ?? 0) <= now);
  }

  /** Records until when the windows are expected to make a booking wait, from one reply. */
  private note(windows: SendWindow[], waitMs: number, tight: boolean): void {
    const now = Date.now();
    for (const w of windows) {
      const busy = waitMs > 0 || tight || w.max <= 1 ? now + waitMs + w.windowMs : 0;
      const key = this.keyOf(w);
      if (busy > (this.busyUntil.get(key) ?? 0)) this.busyUntil.set(key, busy);
    }
    // One entry per chat sent to: what has passed is dropped once there are many.
    if (this.busyUntil.size > BUSY_KEYS_KEPT)
      for (const [key, until] of this.busyUntil) if (until <= now) this.busyUntil.delete(key);
  }

  /** Takes one slot in every window now, or returns the ms to wait (nothing taken then). */
  async tryAcquire(windows: SendWindow[]): Promise<number> {
    if (windows.length === 0) return 0;
    return (await this.call(windows, randomUUID(), "take")).waitMs;
  }

  /**
   * Takes `member`'s slot now or within `soonMs` (at most 100; the caller then waits
   * the reply's ms and sends without asking again), or books the earliest one later. A booking
   * is kept for that member: asking again with it (`booked`) when it comes takes it,
   * ahead of every sender that booked after; asking before that changes nothing.
   */
  async book(
    windows: SendWindow[],
    member: string,
    soonMs: number,
    options: { booked?: boolean } = {},
  ): Promise<SlotReply> {
    if (windows.length === 0) return { waitMs: 0, tight: false, lateMs: 0 };
    return this.call(windows, member, options.booked ? "booked" : "book", soonMs);
  }

  /**
   * Takes `member`'s slot now or within `soonMs`, or books it, in one try (an outage
   * notice asking whether the windows answer): throws Redis' error at once when not.
   */
  async bookOnce(windows: SendWindow[], member: string, soonMs: number): Promise<SlotReply> {
    return this.call(windows, member, "book", soonMs, true);
  }

  /**
   * Records a send made without a slot (Redis refused writes then), answered `agoMs` ago,
   * in every window it still counts in, as if it had had one.
   */
  async recordPast(windows: SendWindow[], member: string, agoMs: number): Promise<void> {
    if (windows.length === 0) return;
    await this.call(windows, member, "past", Math.max(0, Math.round(agoMs)), true);
  }

  /** Records that `member`'s request was answered now (it had arrived by then). */
  async answered(windows: SendWindow[], member: string): Promise<void> {
    if (windows.length === 0) return;
    await this.call(windows, member, "answered");
  }

  /** Waits for a slot in every window and takes it; pass the slot to `answered` after the request. */
  async acquire(windows: SendWindow[], signal?: AbortSignal): Promise<Slot> {
    const member = randomUUID();
    const tight = await this.waitForSlot(windows, member, { soonMs: SOON_MS, ...(signal ? { signal } : {}) });
    return { windows, member, tight };
  }

  /**
   * Waits for `member`'s slot in every window and takes it: now or within `soonMs`
   * (waited out here), else booked and asked for again shortly before it comes, with
   * the same member (which keeps its place). `check` runs before each further wait and
   * throws to give up (a turn whose lease was lost). True when a window is half full.
   */
  async waitForSlot(
    windows: SendWindow[],
    member: string,
    options: { soonMs: number; signal?: AbortSignal; check?: () => void },
  ): Promise<boolean> {
    const { soonMs, signal, check } = options;
    for (;;) {
      const { waitMs, tight, lateMs } = await this.book(windows, member, soonMs, { booked: true });
      // An answer held up past its slot: ask again (the member keeps its place) before leaving.
      if (lateMs - waitMs > LATE_REPLY_MS) {
        check?.();
        continue;
      }
      if (waitMs <= soonMs) {
        if (waitMs > 0) await sleep(waitMs, signal);
        return tight;
      }
      check?.();
      await sleep(waitMs - soonMs / 2, signal);
    }
  }

  /** Blocks the windows for every process until `ms` from now (a platform's retry_after). */
  async hold(windows: SendWindow[], ms: number): Promise<void> {
    if (windows.length === 0 || ms <= 0) return;
    await this.call(windows, "hold", "hold", Math.ceil(ms));
  }
}
