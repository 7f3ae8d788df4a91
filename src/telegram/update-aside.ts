import calculateSlot from "cluster-key-slot";
import type { Update } from "grammy/types";
import { Cluster } from "ioredis";
import { z } from "zod";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Keys } from "../sessions/keys.js";
import { RoomgateError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { durableWrite, type Durability } from "../scheduler/durable-write.js";
import { loggableError } from "./loggable-error.js";

/**
 * How long an update set aside is kept. Longer than any outage a restart is expected
 * to meet, and well inside the inbox's dedupe window (6 h by default), so that a copy
 * left behind by a removal that failed is dropped as a duplicate, never answered twice.
 */
const KEEP_SECONDS = 3600;

/** What is read back: an update as this poller wrote it (grammY's type; its id checked). */
const StoredUpdate = z.looseObject({ update_id: z.number().int() });

/**
 * Updates the poller confirmed to Telegram (to take later ones) before their room's
 * shard could queue them, kept in Redis until they are queued: a Cluster slot range
 * down must not hold the other rooms' updates, and a restart meanwhile must not lose
 * them. Each is written at once to one shard tag's hash per master and counts as kept
 * when one of them took it: a master that is up takes it while another range is down,
 * and a second copy on the same master would fail with the first. "Took it" is what a
 * queued update's write means too: that shard's master and the replicas `durability`
 * requires for it have it (WAIT), since the poller confirms the update to Telegram on
 * the strength of it.
 */
export class UpdateAside {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly botId: number,
    private readonly log: Logger,
    private readonly durability: Durability,
  ) {}

  private all(): string[] {
    return Array.from({ length: this.keys.shards }, (_, n) => this.keys.telegramAside(this.botId, n));
  }

  /**
   * Where a copy is written: on a Cluster the first shard of each master (as the
   * client's slot map has them; a shard whose slot it does not know yet is written
   * too), elsewhere the first shard. Copies on one master are kept or lost together, so
   * further copies there would only add writes, each with its own replica wait; 12
   * shards over 3 masters were 12 writes and WAITs per set-aside batch.
   */
  private targets(): string[] {
    if (!(this.redis instanceof Cluster)) return this.all().slice(0, 1);
    const slots = (this.redis as unknown as { slots: (string[] | undefined)[] }).slots;
    const masters = new Set<string>();
    return this.all().filter((key) => {
      const master = slots[calculateSlot(key)]?.[0];
      if (master === undefined) return true;
      if (masters.has(master)) return false;
      masters.add(master);
      return true;
    });
  }

  /**
   * Keeps `updates`; resolves once one shard took them all, on its replicas too, and
   * rejects when none did. Each shard waits for its own master's replicas: the one
   * that answers first with enough of them is the copy relied on.
   */
  async put(updates: Update[]): Promise<void> {
    if (updates.length === 0) return;
    const fields = updates.flatMap((u) => [String(u.update_id), JSON.stringify(u)]);
    await Promise.any(
      this.targets().map((key) =>
        durableWrite(this.redis, this.durability, key, [
          ["hset", key, ...fields],
          ["expire", key, KEEP_SECONDS],
        ]),
      ),
    ).catch((err: unknown) => {
      throw new UpdateAsideError(
        updates.map((u) => u.update_id),
        err,
      );
    });
  }

  /**
   * Forgets an update that is queued now, where copies are written now (best effort: a
   * copy left, also one written before the slots moved, is dropped as a duplicate).
   */
  remove(updateId: number): void {
    for (const key of this.targets())
      this.redis
        .hdel(key, String(updateId))
        .catch((err: unknown) =>
          this.log.debug(
            { err: loggableError(err).message, updateId },
            "telegram: set-aside copy not removed",
          ),
        );
  }

  /** Every update kept in a shard that answers, in update order (one that does not is logged and skipped). */
  async load(): Promise<Update[]> {
    const byId = new Map<number, Update>();
    const read = await Promise.allSettled(this.all().map((key) => this.redis.hvals(key)));
    for (const r of read) {
      if (r.status === "rejected") {
        this.log.warn(
          { err: loggableError(r.reason), botId: this.botId },
          "telegram: could not read updates set aside in one shard; they are queued after its next restart",
        );
        continue;
      }
      for (const json of r.value) {
        const update = StoredUpdate.parse(JSON.parse(json)) as unknown as Update;
        byId.set(update.update_id, update);
      }
    }
    return [...byId.values()].sort((a, b) => a.update_id - b.update_id);
  }
}

/** No shard could keep updates that could not be queued: the poller keeps trying both. */
export class UpdateAsideError extends RoomgateError {
  constructor(
    readonly updateIds: number[],
    cause: unknown,
  ) {
    super(`could not set aside updates ${updateIds.join(", ")}`, { cause });
  }
}
