import { randomUUID } from "node:crypto";
import type { DeliveryContext } from "../../src/core/adapter.js";
import { SendDeferredError, TransientSendError } from "../../src/core/delivery-errors.js";
import type { Logger } from "../../src/core/log.js";
import { platformOf } from "../../src/core/room.js";
import { laneOf } from "../../src/scheduler/lanes.js";
import { RoomLease } from "../../src/scheduler/room-lease.js";
import { TurnLifecycle } from "../../src/scheduler/turn-lifecycle.js";
import { TurnGate } from "../../src/scheduler/turn-gate.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import type { TestRedis } from "./redis.js";

/**
 * A turn held as a worker holds it: the room's lease taken in Redis and the turn's
 * real gate (TurnGate), so that every send attempt goes through the scheduler's fenced
 * Lua step, on Redis' clock, as in production. `again()` is the gate a retried turn
 * gets: the turn record read back from Redis after the buffered writes were applied.
 */
export class HeldTurn {
  private constructor(
    private readonly db: TestRedis,
    readonly held: RoomLease,
    readonly gate: TurnGate,
    private readonly log: Logger,
  ) {}

  static async take(db: TestRedis, room: string, log: Logger): Promise<HeldTurn> {
    const token = `test-worker/${randomUUID()}/:1`;
    await db.redis.set(db.schedulerKeys.lease(room), token, "PX", 60_000);
    // A new turn: an earlier turn of the room (never finished here) leaves it no record.
    await db.redis.del(db.schedulerKeys.turn(room));
    const held = new RoomLease(db.scheduler, room, laneOf(room), token, {
      leaseMs: 60_000,
      turnRecordMs: 60_000,
    });
    return new HeldTurn(db, held, HeldTurn.gateFor(db, held, {}, log), log);
  }

  private static gateFor(
    db: TestRedis,
    held: RoomLease,
    record: Record<string, string>,
    log: Logger,
  ): TurnGate {
    const deps = {
      limiter: new RedisRateLimiter(db.redis, db.schedulerKeys),
      log,
      platform: platformOf(held.room),
    };
    return new TurnGate(deps, held, record, new TurnLifecycle());
  }

  /** The delivery context a worker passes: the gate is both the turn's ledger and its send gate. */
  context(turnId: string): DeliveryContext {
    return { turnId, ledger: this.gate, gate: this.gate, log: this.log };
  }

  /**
   * Applies the buffered writes (a fenced step without windows) and, as a park does,
   * keeps a slot booked for the unsent part; returns the gate a retry would get.
   */
  async again(): Promise<HeldTurn> {
    const booked = this.gate.bookedSlot();
    await this.gate.reserve([]);
    const key = this.db.schedulerKeys.turn(this.held.room);
    if (booked) await this.db.redis.hset(key, `booked:${booked.part}`, booked.member);
    const record = await this.db.redis.hgetall(key);
    return new HeldTurn(this.db, this.held, HeldTurn.gateFor(this.db, this.held, record, this.log), this.log);
  }
}

/**
 * Delivers as the scheduler does: a deferral (a full window, a 429) waits what it says
 * and a transient failure retries, each time through a gate read back from Redis.
 * Resolves to the refs, how often the turn had to wait or retry, and its last gate.
 */
export async function deliverLikeTheScheduler(
  turn: HeldTurn,
  send: (turn: HeldTurn) => Promise<string[]>,
): Promise<{ refs: string[]; deferred: number; failed: number; turn: HeldTurn }> {
  let deferred = 0;
  let failed = 0;
  for (let current = turn; ; current = await current.again()) {
    try {
      return { refs: await send(current), deferred, failed, turn: current };
    } catch (err) {
      if (err instanceof SendDeferredError) {
        deferred += 1;
        await new Promise((r) => setTimeout(r, err.waitMs));
      } else if (err instanceof TransientSendError) {
        failed += 1;
        await new Promise((r) => setTimeout(r, 100));
      } else {
        throw err;
      }
    }
  }
}
