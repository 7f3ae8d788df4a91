import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Redis } from "ioredis";
import type { Logger } from "../core/log.js";
import type { Keys } from "../sessions/keys.js";
import type { QueueScripts } from "./scripts.js";
import { roomScriptKeys, type HeldRoom } from "./turn-gate.js";
import type { TurnInput, TurnRunner } from "./turn-runner.js";

/** An idle worker looks for due rooms at least this often, even without a wake-up. */
const MAX_IDLE_MS = 2000;
/**
 * A lease not confirmed by Redis within its length minus this is treated as lost. Not a
 * setting: it covers the renewal's round trip and this process's clock drift against
 * Redis' over one lease (the renewal runs every quarter of `queue.leaseSeconds`), so the
 * worker stops before another can take the room; 1 s fits the 10 s default and any
 * lease of a few seconds or more.
 */
const LEASE_MARGIN_MS = 1000;

/** How long handing rooms back at shutdown may take. */
const LET_GO_MS = 2000;

/** Waits for `work`, but no longer than `ms`. */
async function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

interface Held extends HeldRoom {
  lane: string;
  /** Local time until which the lease is known to be ours. */
  confirmedUntil: number;
  done: Promise<void>;
}

/**
 * Claims rooms and runs them, `concurrency` at a time per lane. Idle workers block
 * on their lane's wake list; a claim takes a due pending room or a room whose
 * holder's lease expired (takeover), and reads its head turn in the same call.
 * Leases of all held rooms are renewed together; a room whose renewal fails past
 * its lease is marked lost and its turn stops before any further side effect.
 */
export class RoomWorker {
  /** Names this process in its lease tokens (host/pid/random), so a log can say who held a room. */
  private readonly id = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private readonly held = new Map<string, Held>();
  private readonly blockers: Redis[] = [];
  private readonly loops: Promise<void>[] = [];
  private renewTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly slotWaiters = new Set<() => void>();
  private seq = 0;
  /** Local time of the last claim answered by Redis, for health. */
  lastClaimAt = 0;

  constructor(
    private readonly options: {
      redis: Redis;
      keys: Keys;
      scripts: QueueScripts;
      runner: TurnRunner;
      lanes: string[];
      concurrency: number;
      leaseMs: number;
      log: Logger;
    },
  ) {}

  /** Starts one dispatch loop per lane and the lease renewals. */
  async start(): Promise<void> {
    this.lastClaimAt = Date.now();
    for (const lane of this.options.lanes) {
      const blocker = this.options.redis.duplicate();
      blocker.on("error", () => undefined);
      this.blockers.push(blocker);
      this.loops.push(this.dispatch(lane, blocker));
    }
    this.renewTimer = setInterval(() => void this.renew(), Math.max(200, this.options.leaseMs / 4));
    this.renewTimer.unref();
  }

  /** Whether the dispatch loops run and Redis answered a claim recently (or every slot is busy). */
  healthy(): boolean {
    if (this.stopping) return false;
    const full = this.held.size >= this.options.concurrency * this.options.lanes.length;
    return full || Date.now() - this.lastClaimAt < MAX_IDLE_MS * 3;
  }

  /**
   * Stops claiming, lets running turns finish for at most `graceMs` (each room is
   * let go after its current turn), then lets go of the rooms still held so that
   * another worker continues them at once.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    this.freeSlot();
    for (const b of this.blockers) b.disconnect();
    // A claim or turn waiting on an unreachable Redis must not hold the shutdown past its grace.
    await within(graceMs, Promise.all([...this.loops, ...[...this.held.values()].map((h) => h.done)]));
    const left = [...this.held.values()];
    await within(LET_GO_MS, Promise.all(left.map((h) => this.letGo(h))));
    clearInterval(this.renewTimer);
    if (left.length > 0)
      this.options.log.warn({ rooms: left.length }, "shutdown grace over; rooms handed back");
  }

  private freeSlot(): void {
    for (const wake of this.slotWaiters) wake();
    this.slotWaiters.clear();
  }

  private async dispatch(lane: string, blocker: Redis): Promise<void> {
    const { scripts, keys, log, concurrency, leaseMs } = this.options;
    // Whether the next claim follows a wake-up entry this loop took from the list.
    let woken = false;
    // Whether a room may be due without a wake-up entry (start, timeouts, a busy lane).
    let look = true;
    // How long an idle loop blocks before looking again: until the next room is due.
    let idleWait = MAX_IDLE_MS;
    while (!this.stopping) {
      const active = [...this.held.values()].filter((h) => h.lane === lane).length;
      if (active >= concurrency) {
        await new Promise<void>((resolve) => this.slotWaiters.add(resolve));
        continue;
      }
      if (!look && !woken) {
        try {
          const got = await blocker.blpop(keys.wake(lane), idleWait / 1000);
          woken = got !== null;
          look = true;
        } catch {
          if (this.stopping) break;
          await new Promise((r) => setTimeout(r, 200));
        }
        continue;
      }
      const token = `${this.id}:${(this.seq += 1)}`;
      let res: [number, ...unknown[]];
      try {
        res = (await scripts.run(
          "rgClaim",
          keys.pending(lane),
          keys.running(lane),
          keys.wake(lane),
          keys.prefix,
          token,
          leaseMs,
          woken ? "1" : "",
        )) as [number, ...unknown[]];
        woken = false;
        this.lastClaimAt = Date.now();
      } catch (err) {
        if (this.stopping) break;
        log.warn({ err, lane }, "claim failed; retrying");
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (res[0] === 1) {
        const [, room, head, session, record, more] = res as [
          number,
          string,
          string,
          string | null,
          string[],
          number,
        ];
        this.run(lane, room, token, { head, session, record });
        look = more === 1;
        idleWait = MAX_IDLE_MS;
        continue;
      }
      if (res[0] === 2) continue;
      const next = Number(res[1]);
      idleWait = Math.max(10, Math.min(MAX_IDLE_MS, next < 0 ? MAX_IDLE_MS : next));
      look = false;
    }
  }

  private run(lane: string, room: string, token: string, first: TurnInput): void {
    const held: Held = {
      room,
      token,
      lane,
      lost: false,
      confirmedUntil: Date.now() + this.options.leaseMs - LEASE_MARGIN_MS,
      done: Promise.resolve(),
    };
    this.held.set(room, held);
    held.done = (async () => {
      let input: TurnInput | undefined = first;
      try {
        while (input && !held.lost) input = await this.options.runner.runOne(held, input, this.stopping);
      } catch (err) {
        this.options.log.error({ err, room }, "room run failed; its lease will expire and it is taken over");
      } finally {
        if (this.held.get(room) === held) this.held.delete(room);
        this.freeSlot();
      }
    })();
  }

  /** Renews every held lease, one call per lane; a lease not confirmed in time is lost. */
  private async renew(): Promise<void> {
    const { scripts, keys, leaseMs, log } = this.options;
    const now = Date.now();
    for (const h of this.held.values()) if (now > h.confirmedUntil) h.lost = true;
    const byLane = new Map<string, Held[]>();
    for (const h of this.held.values()) {
      if (h.lost) continue;
      byLane.set(h.lane, [...(byLane.get(h.lane) ?? []), h]);
    }
    for (const [lane, rooms] of byLane) {
      const sent = Date.now();
      try {
        const res = (await scripts.run(
          "rgRenew",
          keys.running(lane),
          keys.prefix,
          leaseMs,
          ...rooms.flatMap((h) => [h.room, h.token]),
        )) as number[];
        rooms.forEach((h, i) => {
          if (res[i] === 1) h.confirmedUntil = sent + leaseMs - LEASE_MARGIN_MS;
          else if (!h.lost) {
            h.lost = true;
            log.warn({ room: h.room }, "room lease lost; its turn stops before any further side effect");
          }
        });
      } catch (err) {
        log.warn({ err: (err as Error).message, lane }, "lease renewal failed");
      }
    }
  }

  /** Hands a held room back: its lease freed and the room pending again, for any worker. */
  private async letGo(h: Held): Promise<void> {
    h.lost = true;
    const { scripts, keys, log } = this.options;
    await scripts
      .run(
        "rgPark",
        ...roomScriptKeys(keys, h.room),
        h.room,
        h.token,
        "",
        "",
        "",
        0,
        "release",
        "shutdown",
        0,
        "",
        0,
      )
      .catch((err: unknown) =>
        log.warn({ err, room: h.room }, "could not hand the room back; its lease expires"),
      );
  }
}
