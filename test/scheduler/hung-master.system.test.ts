import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisSentinelTopology } from "../../bench/support/redis-topology.js";
import { durableWrite } from "../../src/scheduler/durable-write.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import { capturingLogger } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

/**
 * A hung master (SIGSTOP: its sockets stay open, no RST ever comes) behind Sentinel:
 * the writes that were waiting on it when it froze must not hold up the process once
 * the sentinels have promoted a replica. Each of them carried a WAIT for the old
 * master's replica count; resent to the new master, which has one replica fewer, each
 * held the shared connection for its whole timeout, one after another (the fault
 * script's `hung-master`: 30 s without an answer, with a new master after 3 s).
 */

/** How many writes are in flight when the master freezes (a busy process has dozens). */
const WRITERS = 40;

describe("behind Sentinel, the master hung (SIGSTOP) with writes in flight", () => {
  const dir = mkdtempSync(join(tmpdir(), "rg-wait-sentinel-hung-"));
  let group: RedisSentinelTopology;
  let connection: RedisConnection;
  const { log } = capturingLogger();
  beforeAll(async () => {
    group = await RedisSentinelTopology.start({
      dir,
      replicas: 2,
      sentinels: 3,
      config: ["min-replicas-to-write 1", "min-replicas-max-lag 10"],
    });
    connection = new RedisConnection({ kind: "sentinel", name: group.name, nodes: group.urls });
    await connection.resolveWait("auto", log);
    connection.watchClients({ deadAfterMs: 30_000, probeEveryMs: 200, log, lost: () => undefined });
  }, 60_000);
  afterAll(async () => {
    connection?.close();
    await group?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("acknowledges every writer's next write within 5 s of the promotion, each with its own reply", async () => {
    const durability = connection.durability(log);
    await waitFor(
      async () => (await durability.required("k")).replicas === 2,
      20_000,
      "two replicas counted",
    );
    let writing = true;
    const acknowledged = new Array<number>(WRITERS).fill(0);
    const wrongReplies: unknown[] = [];
    const writers = Array.from({ length: WRITERS }, async (_, i) => {
      while (writing) {
        await durableWrite(connection.client, durability, `w${i}`, [["set", `w${i}`, "x"]]).then(
          ([reply]) => {
            if (reply === "OK") acknowledged[i] = acknowledged[i]! + 1;
            else wrongReplies.push(reply);
          },
          () => undefined,
        );
      }
    });
    await waitFor(() => acknowledged.every((n) => n > 0), 20_000, "every writer acknowledged once");
    const old = await group.master();
    process.kill(old.pid!, "SIGSTOP");
    try {
      const since = Date.now();
      await group.promotedFrom(old);
      const promotedAfter = (Date.now() - since) / 1000;
      const before = [...acknowledged];
      // A write of every writer, not just one: a write resent to the new master without
      // its WAIT was never sent at all, and the replies after it went to the wrong writes.
      await waitFor(
        () => acknowledged.every((n, i) => n > before[i]!),
        60_000,
        "a write of every writer acknowledged by the new master",
      );
      expect((Date.now() - since) / 1000).toBeLessThan(promotedAfter + 5);
      expect(wrongReplies).toEqual([]);
      expect((await durability.required("k")).replicas).toBe(1);
    } finally {
      writing = false;
      process.kill(old.pid!, "SIGCONT");
      await Promise.all(writers);
    }
  }, 120_000);
});
