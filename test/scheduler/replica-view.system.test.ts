import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durableWrite, ReplicaWaitError } from "../../src/scheduler/durable-write.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { capturingLogger } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

/**
 * One instance with a replica still loading its first sync: acknowledged writes wait
 * for that replica instead of taking the master for one without replicas. The master
 * holds the sync back (diskless, 60 s delay), so the replica stays listed as
 * `wait_bgsave` for the whole test.
 */
describe("one instance whose replica is still syncing", () => {
  const dir = mkdtempSync(join(tmpdir(), "rg-view-syncing-"));
  let master: RedisServer;
  let replica: RedisServer;
  let connection: RedisConnection;
  const { log, lines } = capturingLogger();

  beforeAll(async () => {
    master = await RedisServer.start({
      dir: join(dir, "master"),
      config: ["repl-diskless-sync yes", "repl-diskless-sync-delay 60"],
    });
    replica = await RedisServer.start({
      dir: join(dir, "replica"),
      config: [`replicaof 127.0.0.1 ${master.port}`],
    });
    const probe = master.client();
    await waitFor(
      async () => /^slave0:.*state=wait_bgsave/m.test(await probe.info("replication")),
      20_000,
      "the replica listed as waiting for its sync",
    );
    probe.disconnect();
    connection = RedisConnection.single(master.url);
    expect(await connection.resolveWait("auto", log)).toBe(1);
  }, 60_000);

  afterAll(async () => {
    connection?.close();
    await replica?.kill();
    await master?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it("does not acknowledge a write the replica does not have yet", async () => {
    const durability = connection.durability(log);
    expect((await durability.required("k")).replicas).toBe(1);
    await expect(
      durableWrite(connection.client, durability, "k", [["set", "k", "v"]]),
    ).rejects.toBeInstanceOf(ReplicaWaitError);
    expect(lines().some((l) => String(l.msg).includes("has no replica"))).toBe(false);
  });
});
