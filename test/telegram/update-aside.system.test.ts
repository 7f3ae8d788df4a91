import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Update } from "grammy/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { Keys } from "../../src/sessions/keys.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { UpdateAside, UpdateAsideError } from "../../src/telegram/update-aside.js";
import { onlineReplicas } from "../../src/scheduler/replica-view.js";
import { waitFor } from "../support/wait.js";

const BOT = 4242;

function update(id: number): Update {
  return {
    update_id: id,
    message: { message_id: id, date: 0, chat: { id: 501, type: "private", first_name: "A" }, text: `m${id}` },
  } as Update;
}

/**
 * An update set aside (its room's shard down) is confirmed to Telegram right after:
 * like a queued one, it must be on the replicas acknowledged writes wait for, or a
 * promotion loses a message Telegram will never send again. A real master and replica;
 * the replica frozen (SIGSTOP) so it acknowledges nothing.
 */
describe("updates set aside are kept only once a replica has them", () => {
  const dir = mkdtempSync(join(tmpdir(), "rg-update-aside-"));
  const keys = new Keys("aside");
  let master: RedisServer;
  let replica: RedisServer;
  let connection: RedisConnection;

  beforeAll(async () => {
    master = await RedisServer.start({ dir: join(dir, "master") });
    replica = await RedisServer.start({
      dir: join(dir, "replica"),
      config: [`replicaof 127.0.0.1 ${master.port}`],
    });
    // In sync by both sides' word: the replica loaded the snapshot, and the master lists
    // it online (its first acknowledgement can come after the replica says its link is up;
    // until then a write is refused, as the test below expects while it is frozen).
    const probe = replica.client();
    const masterProbe = master.client();
    await waitFor(
      async () =>
        /master_link_status:up/.test(await probe.info("replication")) &&
        onlineReplicas(await masterProbe.info("replication")).length > 0,
      20_000,
      "the replica in sync",
    );
    probe.disconnect();
    masterProbe.disconnect();
    connection = RedisConnection.single(master.url);
    expect(await connection.resolveWait("auto", silentLogger())).toBe(1);
  }, 60_000);

  afterAll(async () => {
    if (replica?.pid) process.kill(replica.pid, "SIGCONT");
    connection?.close();
    await replica?.kill();
    await master?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The ids of the updates set aside that the replica holds. */
  async function onReplica(): Promise<number[]> {
    const client = replica.client();
    try {
      const kept = await Promise.all(
        Array.from({ length: keys.shards }, (_, n) => client.hkeys(keys.telegramAside(BOT, n))),
      );
      return [...new Set(kept.flat().map(Number))].sort((a, b) => a - b);
    } finally {
      client.disconnect();
    }
  }

  it("refuses while the replica acknowledges nothing, and keeps the update on it once it does", async () => {
    const aside = new UpdateAside(
      connection.client,
      keys,
      BOT,
      silentLogger(),
      connection.durability(silentLogger()),
    );
    await aside.put([update(1)]);
    expect(await onReplica()).toEqual([1]);

    process.kill(replica.pid!, "SIGSTOP");
    try {
      // Not kept: the poller must not confirm update 2 to Telegram yet.
      await expect(aside.put([update(2)])).rejects.toBeInstanceOf(UpdateAsideError);
    } finally {
      process.kill(replica.pid!, "SIGCONT");
    }
    await waitFor(
      () =>
        aside.put([update(2)]).then(
          () => true,
          () => false,
        ),
      20_000,
      "update 2 set aside once the replica answers",
    );
    expect(await onReplica()).toEqual([1, 2]);
    expect((await aside.load()).map((u) => u.update_id)).toEqual([1, 2]);
  });
});
