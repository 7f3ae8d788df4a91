import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RoomSignals } from "../../src/scheduler/room-signals.js";
import { silentLogger } from "../../src/core/log.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

let db: TestRedis;
beforeAll(async () => {
  db = await testRedis();
});
afterAll(async () => {
  await db.cleanup();
});

/** What the enqueue script publishes for an event queued behind a room's running turn. */
const signal = (room: string) => db.redis.publish(db.schedulerKeys.roomSignal(room), "queued");

describe("room signals", () => {
  it("tells a room's listeners of each signal, and after a lost connection tells them to read again", async () => {
    const name = `rg-signals-${randomBytes(4).toString("hex")}`;
    const signals = new RoomSignals(
      () => new Redis(db.url, { maxRetriesPerRequest: null, connectionName: name }),
      db.keys,
      silentLogger(),
    );
    let heard = 0;
    let other = 0;
    const stop = await signals.listen("telegram:1:2", () => (heard += 1));
    await signals.listen("telegram:1:3", () => (other += 1));
    try {
      await signal("telegram:1:2");
      await waitFor(() => heard === 1, 10_000, "the signal");
      expect(other).toBe(0);

      // Signals sent while the connection is down are lost: its listeners must read the inbox again.
      const clients = String(await db.redis.client("LIST"));
      const id = /id=(\d+) .*? name=(\S+)/g;
      const ours = [...clients.matchAll(id)].find((m) => m[2] === name)![1]!;
      await db.redis.client("KILL", "ID", ours);
      await waitFor(() => heard === 2 && other === 1, 10_000, "the listeners told to read again");

      stop();
      await signal("telegram:1:2");
      await signal("telegram:1:3");
      await waitFor(() => other === 2, 10_000, "the other room's signal");
      expect(heard).toBe(2);
    } finally {
      signals.close();
    }
  });
});
