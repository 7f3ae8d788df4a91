import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { SendWindow } from "../core/adapter.js";
import { retry, sleep, type RetryPolicy } from "../core/retry.js";
import { declareScript, MoreKeys, runScript } from "./lua-script.js";
import { isUnacknowledged, NO_WAIT, type Durability } from "./durable-write.js";
import { writeRefusals } from "./write-refusals.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { schedulerKeysOf, type KeyLayout, type SchedulerKeys } from "./scheduler-keys.js";
import { SLOW_MS, WindowFallback } from "./window-fallback.js";

/** reserve-slot.lua (with the windows' functions, windows.lua): one send slot, a 429's hold, an answer time. */
export const RESERVE_SLOT = declareScript({
  file: new URL("./lua/reserve-slot.lua", import.meta.url),
  includes: [new URL("./lua/windows.lua", import.meta.url)],
  keys: ["first", "state"],
  moreKeys: true,
  args: z.object({
    windows: z.array(z.object({ windowKey: z.number(), max: z.number(), windowMs: z.number() })),
    member: z.string(),
    mode: z.enum(["take", "book", "booked", "answered", "hold", "past", "checked"]),
    ms: z.number(),
    gate: z.boolean(),
    startedAt: z.number().optional(),
    groupMs: z.number().optional(),
    holds: z.array(z.number()).optional(),
    group: z.boolean().optional(),
  }),
  reply: z.object({
    waitMs: z.number(),
    tight: z.boolean(),
    unchecked: z.boolean().optional(),
    at: z.number().optional(),
    idleMs: z.number().optional(),
  }),
});

type Mode = "take" | "book" | "booked" | "answered" | "hold" | "past";

/** A reply of the slot script with the call's round trip. */
interface Direct {
  waitMs: number;
  tight: boolean;
  unchecked?: boolean | undefined;
  at?: number | undefined;
  idleMs?: number | undefined;
  rttMs: number;
}

/** While a slow call to the bot's windows is awaited, how often the fallback is considered. */
const FALLBACK_POLL_MS = 250;

/**
 * A slot write not acknowledged (its replicas lag, the bot's master is failing over) is
 * sent again with the same member for about 15 s; then the send fails as any Redis
 * error does (a turn parks and tries again later).
 */
const UNACKNOWLEDGED: RetryPolicy = { attempts: 20, firstMs: 100, maxMs: 1000, jitter: true };

/**
 * Refusals (or Redis out of reach) lasting this long, as this process saw them, may have
 * come with outage notices sent without a slot by some process: they are sent after 10 s
 * of refusals, and a process with work waiting tries a write every 0.5–2.5 s meanwhile,
 * so it saw at least 10 − 2 × 2.5 = 5 s of them (first try late, last try early). A
 * shorter outage (an ordinary failover, ~2–5 s) sent no notice and is not held.
 */
const OUTAGE_MS = 4500;

/**
 * After such refusals the first bookings wait this long once Redis takes this process's
 * write again: a process that sent notices without a slot records them in the windows
 * within ~50 ms of Redis taking writes (src/edge/unbooked-notices.ts), and they must be
 * there before anyone books the next send, or the two together pass a limit.
 */
const AFTER_OUTAGE_MS = 500;

/** Window keys `expectsSlotNow` remembers before it drops the ones that passed. */
const BUSY_KEYS_KEPT = 10_000;

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

  private readonly keys: SchedulerKeys;
  private readonly fallback: WindowFallback;
  /** Members whose slot was taken in the fallback windows, until answered there. */
  private readonly viaFallback = new Set<string>();
  /** The write that asks whether Redis takes writes again after refusals, shared by the bookings waiting. */
  private settling: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisClient,
    layout: KeyLayout,
    private readonly durability: Durability = NO_WAIT,
  ) {
    this.keys = schedulerKeysOf(layout);
    this.fallback = new WindowFallback(redis, this.keys, durability, (windows) =>
      this.direct(windows, "probe", "answered", 0, { gate: true }),
    );
  }

  /** A window's sorted set: the group is its hash tag, so one send's windows share a slot. */
  private keyOf(w: SendWindow): string {
    return this.keys.rate(w.group, w.scope);
  }

  private async call(
    windows: SendWindow[],
    member: string,
    mode: Mode,
    ms = 0,
    once = false,
  ): Promise<SlotReply> {
    const fb = this.fallback;
    let reply: { waitMs: number; tight: boolean; rttMs: number };
    if (!fb.applies(windows)) reply = await this.direct(windows, member, mode, ms, { gate: false, once });
    else if (mode === "answered" || mode === "hold" || mode === "past") {
      if (mode !== "past" && this.viaFallback.delete(member)) {
        await fb.record(windows, member, mode, ms);
        return { waitMs: 0, tight: false, lateMs: 0 };
      }
      reply = await this.direct(windows, member, mode, ms, { gate: true, once });
    } else reply = await this.gatedOrFallback(windows, member, mode, ms, once);
    if (mode !== "answered" && mode !== "past")
      this.note(windows, mode === "hold" ? ms : reply.waitMs, mode !== "hold" && reply.tight);
    return { waitMs: reply.waitMs, tight: reply.tight, lateMs: this.lateness(reply.rttMs) };
  }

  /**
   * A slot in the bot's windows, or in the fallback (window-fallback.ts) once they have
   * failed or hung long enough and the cluster marks their master failed.
   */
  private async gatedOrFallback(
    windows: SendWindow[],
    member: string,
    mode: "take" | "book" | "booked",
    ms: number,
    once: boolean,
  ): Promise<{ waitMs: number; tight: boolean; rttMs: number }> {
    const fb = this.fallback;
    const soon = mode === "take" ? 0 : ms;
    const fallback = async () => {
      const sentAt = Date.now();
      const r = await fb.take(windows, member, soon);
      if (r.waitMs <= soon && r.tight) {
        // Kept only while its answer is worth recording (a tight window): the gate reports only those.
        if (this.viaFallback.size > BUSY_KEYS_KEPT) this.viaFallback.clear();
        this.viaFallback.add(member);
      }
      return { ...r, rttMs: Date.now() - sentAt };
    };
    if (await fb.ready(windows)) return fallback();
    const sentAt = Date.now();
    const settled = this.gated(windows, member, mode, ms, once).then(
      (value) => {
        fb.ok();
        return { value };
      },
      (err: unknown) => {
        fb.failing(sentAt);
        return { err };
      },
    );
    for (let waited = 0; ; waited += FALLBACK_POLL_MS) {
      const outcome = await Promise.race([settled, sleep(waited === 0 ? SLOW_MS : FALLBACK_POLL_MS)]);
      if (outcome && "value" in outcome) return outcome.value;
      if (outcome) {
        if (await fb.ready(windows)) return fallback();
        throw outcome.err;
      }
      fb.failing(sentAt);
      if (await fb.ready(windows)) return fallback();
    }
  }

  /** A call to the bot's windows that waits, after a gap, for the shards to be checked (window-fallback.ts). */
  private async gated(
    windows: SendWindow[],
    member: string,
    mode: Mode,
    ms: number,
    once: boolean,
  ): Promise<Direct> {
    for (;;) {
      const reply = await this.direct(windows, member, mode, ms, { gate: true, once });
      if (!reply.unchecked) return reply;
      let startedAt = reply.at ?? 0;
      let idleMs = reply.idleMs ?? -1;
      for (;;) {
        const hold = await this.fallback.check(windows[0]!.group, idleMs);
        const bot = windows[0]!;
        // Each group that sent through the fallback: its window is blocked while those sends count.
        const groups = [...hold.groups].map(([scope, ms]) => ({
          window: { ...bot, scope, max: 1, windowMs: ms },
          ms,
        }));
        const checked = await this.direct(
          [bot, ...groups.map((g) => g.window)],
          "check",
          "checked",
          hold.botMs,
          { gate: true, startedAt, groupMs: hold.groupMs, holds: groups.map((g) => g.ms) },
        );
        if (!checked.unchecked) break;
        startedAt = checked.at ?? 0;
        idleMs = checked.idleMs ?? -1;
      }
    }
  }

  private async direct(
    windows: SendWindow[],
    member: string,
    mode: Mode | "checked",
    ms: number,
    options: { gate: boolean; once?: boolean; startedAt?: number; groupMs?: number; holds?: number[] },
  ): Promise<Direct> {
    const { gate, once = false, startedAt, groupMs, holds } = options;
    // A group's send waits out the fallback's group sends after an outage (reserve-slot.lua).
    const group = gate && windows.some((w) => w.scope.startsWith("group:"));
    const first = windows[0]!;
    const keys = { first: this.keyOf(first), state: this.keys.rate(first.group, "state") };
    const more = new MoreKeys(RESERVE_SLOT, keys);
    const list = windows.map((w) => ({
      windowKey: more.of(this.keyOf(w)),
      max: w.max,
      windowMs: w.windowMs,
    }));
    let sentAt = 0;
    const booking = mode === "take" || mode === "book" || mode === "booked";
    const reply = await retry(
      async (attempt) => {
        if (booking) await this.afterOutage(windows);
        sentAt = Date.now();
        // A retried booking may have been recorded: it is asked for as the member's own.
        const as = mode === "book" && attempt > 1 ? "booked" : mode;
        return runScript(
          this.redis,
          RESERVE_SLOT,
          keys,
          {
            windows: list,
            member,
            mode: as,
            ms,
            gate,
            ...(startedAt === undefined ? {} : { startedAt }),
            ...(groupMs === undefined ? {} : { groupMs, holds }),
            ...(group ? { group } : {}),
          },
          { durability: this.durability, moreKeys: more },
        );
      },
      (err) => (!once && isUnacknowledged(err) ? "retry" : "fail"),
      UNACKNOWLEDGED,
    );
    return { ...reply, rttMs: Date.now() - sentAt };
  }

  /**
   * After refusals this process saw (writeRefusals), a booking first asks Redis for a
   * write that changes nothing (an answer time for no member), and once Redis takes
   * it, after refusals long enough for outage notices, waits AFTER_OUTAGE_MS: the notices
   * sent without a slot meanwhile are then in the windows. Throws Redis' refusal.
   */
  private async afterOutage(windows: SendWindow[]): Promise<void> {
    if (writeRefusals.unsettledMs() === undefined) return;
    this.settling ??= (async () => {
      const lasted = writeRefusals.unsettledMs() ?? 0;
      const sentAt = Date.now();
      await runScript(
        this.redis,
        RESERVE_SLOT,
        { first: this.keyOf(windows[0]!), state: this.keys.rate(windows[0]!.group, "state") },
        {
          windows: [{ windowKey: 1, max: 1, windowMs: 1 }],
          member: `probe:${randomUUID()}`,
          mode: "answered",
          ms: 0,
          gate: false,
        },
        { durability: this.durability },
      );
      writeRefusals.settled(sentAt);
      if (lasted >= OUTAGE_MS) await sleep(AFTER_OUTAGE_MS);
    })().finally(() => (this.settling = undefined));
    await this.settling;
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
