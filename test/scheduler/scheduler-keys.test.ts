import calculateSlot from "cluster-key-slot";
import { describe, expect, it } from "vitest";
import { SchedulerKeys } from "../../src/scheduler/scheduler-keys.js";
import { Keys } from "../../src/sessions/keys.js";

const slot = (key: string) => calculateSlot(key);

describe("the sharded key layout", () => {
  const keys = new SchedulerKeys("rg", { shards: 12 });
  const others = new Keys("rg", { shards: 12 });
  const rooms = [
    "telegram:123:-100200",
    "telegram:123:-100200:77",
    "matrix:!abc:example.org",
    "matrix:!abc:example.org:8448:$threadroot",
    "shell:alice",
    "some-new-platform:with{braces}:x",
  ];

  it("puts every key of a room and of its lane in its shard's one slot, for any room key", () => {
    for (const room of rooms) {
      const r = keys.room(room);
      const lane = keys.laneShard("telegram", r.shard);
      const e2ee = keys.laneShard("matrix-e2ee", r.shard);
      const all = [
        r.inbox,
        keys.seen(r.shard),
        r.lease,
        r.turn,
        r.session,
        r.history,
        r.offerRefs,
        lane.pending,
        lane.running,
        e2ee.pending,
        keys.turnRate(room, "tg:1"),
        keys.notice(room, "queue", "tg:1"),
        keys.deadLetters(r.shard),
        keys.deadLetterIndex(r.shard),
        // The other modules' per-room keys, placed in the same shard.
        others.mute(room),
        others.held(room),
        others.refused(room, "tg:1"),
        others.notice(room, "leaving", "bot"),
        others.task(room, "call"),
      ];
      expect(new Set(all.map(slot)).size, room).toBe(1);
    }
  });

  it("spreads the shards evenly over three equal master ranges, and rooms over the shards", () => {
    const perMaster = [0, 0, 0];
    for (let n = 0; n < keys.shards; n += 1) {
      perMaster[Math.floor(slot(keys.deadLetters(n)) / (16384 / 3))]! += 1;
    }
    expect(perMaster).toEqual([4, 4, 4]);
    const perShard = new Array<number>(keys.shards).fill(0);
    for (let i = 0; i < 1200; i += 1) perShard[keys.shardOf(`telegram:1:${i}`)]! += 1;
    expect(Math.min(...perShard)).toBeGreaterThan(50);
  });

  it("keeps a room in the same shard in every process, and refuses an impossible shard count", () => {
    expect(new SchedulerKeys("rg", { shards: 12 }).room(rooms[0]!)).toEqual(keys.room(rooms[0]!));
    expect(() => new SchedulerKeys("rg", { shards: 0 })).toThrow(RangeError);
    expect(() => new Keys("rg", { shards: 0 })).toThrow(RangeError);
  });
});
