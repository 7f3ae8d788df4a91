import type { SendWindow } from "../core/adapter.js";
import { retry, sleep, type RetryPolicy } from "../core/retry.js";
import { MoreKeys, runScript } from "./lua-script.js";
import { RESERVE_SLOT, type Direct, type Mode } from "./reserve-slot-script.js";
import { isUnacknowledged, type Durability } from "./durable-write.js";
import { writeRefusals } from "./write-refusals.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { SchedulerKeys } from "./scheduler-keys.js";
import { fallbackShard, GroupMirror } from "./group-mirror.js";
import { NoticeMarks } from "./notice-marks.js";
import type { GroupSends } from "./fallback-scripts.js";
import { SLOW_MS, WindowFallback } from "./window-fallback.js";

/** A send to a group whose shard is held and out of reach asks again after this long. */
const RECHECK_MS = 1000;

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
 * shorter outage (an ordinary failover, ~2–5 s) sent no notice, and its first bookings
 * do not wait for the receivers' marks (notice-marks.ts).
 */
const OUTAGE_MS = 4500;

/** Entries a per-process map keeps (`expectsSlotNow`'s window keys, the fallback's members) before it is trimmed. */
export const BUSY_KEYS_KEPT = 10_000;

/**
 * Every call of reserve-slot.lua for the rate limiter (src/scheduler/rate-limiter.ts):
 * straight to the bot's windows, through the gap check after a gap in their calls, or
 * into the fallback windows (window-fallback.ts) while a Cluster range holds the bot's
 * windows down. Kept apart so the limiter keeps only what it decides from the replies.
 */
export class SlotCalls {
  /** The fallback windows, used on a Cluster while the bot's windows do not answer. */
  readonly fallback: WindowFallback;
  /** Members whose slot was taken in the fallback windows, until answered there. */
  private readonly viaFallback = new Set<string>();
  /** The write that asks whether Redis takes writes again after refusals, shared by the bookings waiting. */
  private settling: Promise<void> | undefined;
  /** The receivers' marks that their notices sent without a slot are in the windows. */
  readonly noticeMarks: NoticeMarks;
  /** Each group's sends through the bot's windows, copied where the fallback reads them. */
  readonly mirror: GroupMirror;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SchedulerKeys,
    private readonly durability: Durability,
  ) {
    this.noticeMarks = new NoticeMarks(redis, keys, durability);
    this.mirror = new GroupMirror(redis, keys, durability);
    this.fallback = new WindowFallback(redis, keys, durability, (windows) =>
      this.direct(windows, "probe", "answered", 0, { gate: true }),
    );
  }

  /** A window's sorted set: the group is its hash tag, so one send's windows share a slot. */
  keyOf(w: SendWindow): string {
    return this.keys.rate(w.group, w.scope);
  }

  /**
   * Records `member`'s answer or 429 hold in the fallback windows when its slot was taken
   * there; false (nothing recorded) when it was not.
   */
  async recordViaFallback(
    windows: SendWindow[],
    member: string,
    mode: "answered" | "hold",
    ms: number,
  ): Promise<boolean> {
    if (!this.viaFallback.delete(member)) return false;
    await this.fallback.record(windows, member, mode, ms);
    return true;
  }

  /**
   * A slot in the bot's windows, or in the fallback (window-fallback.ts) once they have
   * failed or hung long enough and the cluster marks their master failed.
   */
  async gatedOrFallback(
    windows: SendWindow[],
    member: string,
    mode: "take" | "book" | "booked",
    ms: number,
    once: boolean,
  ): Promise<{ waitMs: number; tight: boolean; rttMs: number; viaFallback?: true }> {
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
      return { ...r, rttMs: Date.now() - sentAt, viaFallback: true as const };
    };
    if (await fb.ready(windows)) return fallback();
    const sentAt = Date.now();
    // A call left for the fallback stays queued in the client and runs once the range is
    // back: its slot is then one no request uses (the send went through the fallback, which
    // the check's holds count), and left there it counts as a send for a whole window.
    const instead = () => {
      void settled
        .then((o) => ("value" in o ? this.direct(windows, member, "release", 0, { gate: false }) : undefined))
        .catch(() => undefined);
      return fallback();
    };
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
      if (await fb.ready(windows)) return instead();
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
    const bot = windows[0]!;
    for (;;) {
      // An outage notice (`once`) cannot wait for a shard's check: it waits out its group's hold.
      const reply = await this.direct(windows, member, mode, ms, { gate: true, once, blanketOk: once });
      if (!reply.unchecked) return reply;
      if (reply.shard !== undefined) {
        if (await this.recheck(bot, reply.shard, reply.at ?? 0)) continue;
        // Still out of reach: nothing taken, asked again in a moment.
        return { waitMs: RECHECK_MS, tight: false, rttMs: reply.rttMs };
      }
      let startedAt = reply.at ?? 0;
      let idleMs = reply.idleMs ?? -1;
      for (;;) {
        const hold = await this.fallback.check(bot.group, idleMs);
        const groups = groupWindows(bot, hold.groups);
        const checked = await this.direct(
          [bot, ...groups.map((g) => g.window)],
          "check",
          "checked",
          hold.botMs,
          {
            gate: true,
            startedAt,
            imports: groups.map((g) => g.sent),
            groupMs: hold.groupMs,
            shardsHeld: hold.shardsHeld,
            shardsReached: hold.shardsReached,
          },
        );
        if (!checked.unchecked) break;
        startedAt = checked.at ?? 0;
        idleMs = checked.idleMs ?? -1;
      }
    }
  }

  /**
   * Checks one shard whose groups a check could not reach (window-fallback.ts) and,
   * when it answers, lifts their hold in the bot's windows, putting the group sends it
   * let through in their windows instead; false when it does not answer.
   */
  private async recheck(bot: SendWindow, shard: number, startedAt: number): Promise<boolean> {
    const hold = await this.fallback.checkShard(bot.group, shard);
    if (hold === undefined) return false;
    const groups = groupWindows(bot, hold.groups);
    await this.direct([bot, ...groups.map((g) => g.window)], "check", "rechecked", hold.botMs, {
      gate: true,
      startedAt,
      imports: groups.map((g) => g.sent),
      shardsReached: [shard],
    });
    return true;
  }

  /** One call of reserve-slot.lua, sent again while its write is not acknowledged (`once`: not). */
  async direct(
    windows: SendWindow[],
    member: string,
    mode: Mode | "checked" | "rechecked" | "release",
    ms: number,
    options: {
      gate: boolean;
      once?: boolean;
      startedAt?: number;
      imports?: GroupSends[];
      groupMs?: number;
      shardsHeld?: number[];
      shardsReached?: number[];
      blanketOk?: boolean;
    },
  ): Promise<Direct> {
    const { gate, once = false, startedAt, imports, groupMs, shardsHeld, shardsReached, blanketOk } = options;
    // A group's send waits out the fallback's group sends after an outage (reserve-slot.lua).
    const groupShard =
      gate &&
      (mode === "take" || mode === "book" || mode === "booked") &&
      windows.some((w) => w.scope.startsWith("group:"))
        ? fallbackShard(this.keys, windows, member)
        : undefined;
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
            ...(startedAt === undefined ? {} : { startedAt, imports, shardsReached }),
            ...(groupMs === undefined ? {} : { groupMs, shardsHeld }),
            ...(groupShard === undefined ? {} : { groupShard, blanketOk }),
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
   * write that changes nothing (notice-marks.ts). Once Redis takes it, after refusals
   * long enough for outage notices, it waits until every receiver has marked its notices
   * sent without a slot meanwhile as in the windows. Throws Redis' refusal.
   */
  private async afterOutage(windows: SendWindow[]): Promise<void> {
    const since = writeRefusals.unsettledSince();
    if (since === undefined) return;
    this.settling ??= (async () => {
      const lasted = writeRefusals.unsettledMs() ?? 0;
      const sentAt = Date.now();
      await this.noticeMarks.probe(windows[0]!.group);
      if (lasted >= OUTAGE_MS) await this.noticeMarks.awaitMarked(windows[0]!.group, since);
      writeRefusals.settled(sentAt);
    })().finally(() => (this.settling = undefined));
    await this.settling;
  }
}

/** Each group that sent through the fallback: its window in the bot's slot, and those sends to put there. */
function groupWindows(
  bot: SendWindow,
  groups: Map<string, GroupSends>,
): { window: SendWindow; sent: GroupSends }[] {
  return [...groups].map(([scope, sent]) => ({ window: { ...bot, scope }, sent }));
}
