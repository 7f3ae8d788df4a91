import calculateSlot from "cluster-key-slot";
import { DEFAULT_SHARDS, MAX_SHARDS } from "../core/config/queue.js";

/** Redis Cluster's number of hash slots. */
const SLOTS = 16384;
/** Rooms whose shard is remembered; past this the memo starts over (a few MB at most). */
const SHARD_MEMO_MAX = 50_000;

/**
 * Where a room's keys live: rooms are spread over `shards` shards by a hash of the
 * room key, and a shard's keys share one `{hash tag}`. Shard n's tag is chosen so
 * that its slot lies in the n-th of `shards` equal slot ranges: a cluster whose
 * masters own equal ranges gets an even share of shards each. The same layout runs
 * on a single Redis. The scheduler's keys (src/scheduler/scheduler-keys.ts) and the
 * other modules' per-room keys (src/sessions/keys.ts) are placed by it alike.
 */
export class RoomShards {
  readonly shards: number;
  private readonly tags: string[];
  /** A turn asks for its room's shard several times (every key it names): the CRC16 is taken once. */
  private readonly memo = new Map<string, number>();

  constructor(
    readonly prefix: string,
    options: { shards?: number } = {},
  ) {
    this.shards = options.shards ?? DEFAULT_SHARDS;
    if (!Number.isInteger(this.shards) || this.shards < 1 || this.shards > MAX_SHARDS) {
      throw new RangeError(`shards must be an integer from 1 to ${MAX_SHARDS}, got ${this.shards}`);
    }
    this.tags = Array.from({ length: this.shards }, (_, n) => shardTag(n, this.shards));
  }

  /** The shard a room belongs to: any room key, by a stable hash of the whole key. */
  shardOf(room: string): number {
    let shard = this.memo.get(room);
    if (shard === undefined) {
      if (this.memo.size >= SHARD_MEMO_MAX) this.memo.clear();
      shard = calculateSlot(room) % this.shards;
      this.memo.set(room, shard);
    }
    return shard;
  }

  /** Shard n's hash tag, as it appears between braces in its keys. */
  tag(shard: number): string {
    const tag = this.tags[shard];
    if (tag === undefined) throw new RangeError(`no shard ${shard} (shards: ${this.shards})`);
    return tag;
  }

  /** A key in shard n's hash slot. */
  protected inShard(shard: number, rest: string): string {
    return `${this.prefix}:{${this.tag(shard)}}:${rest}`;
  }

  /** A key of one room (`<prefix>:{<shard tag>}:room:<room>:<what>`), in its shard's hash slot. */
  ofRoom(room: string, what: string): string {
    return this.inShard(this.shardOf(room), `room:${room}:${what}`);
  }
}

/**
 * Shard n's hash tag: `s<n>`, or `s<n>.<k>` with the smallest k that puts its slot in
 * the n-th of `shards` equal slot ranges. Deterministic, so every process agrees.
 */
function shardTag(n: number, shards: number): string {
  const from = Math.floor((n * SLOTS) / shards);
  const to = Math.floor(((n + 1) * SLOTS) / shards);
  for (let k = 0; ; k += 1) {
    const tag = k === 0 ? `s${n}` : `s${n}.${k}`;
    const slot = calculateSlot(tag);
    if (slot >= from && slot < to) return tag;
  }
}
