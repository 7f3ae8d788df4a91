import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durableWrite, ReplicaWaitError } from "../../src/scheduler/durable-write.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { heldProxy, type HeldProxy } from "../support/held-proxy.js";
import { capturingLogger } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

/**
 * A write is relied on only once every replica its master has in sync acknowledged it,
 * including one that finished its sync after the count of replicas was read: that
 * replica may be the one promoted next (the fault script's failback: a switchover back
 * to the old master soon after it rejoined as a replica lost acknowledged turns).
 */
describe("a replica in sync that joined after the count was read", () => {
  const dir = mkdtempSync(join(tmpdir(), "rg-durable-"));
  let master: RedisServer;
  let first: RedisServer;
  let late: RedisServer | undefined;
  let proxy: HeldProxy;
  let connection: RedisConnection;
  const { log } = capturingLogger();
  beforeAll(async () => {
    // The replica that joins late syncs in milliseconds (no diskless delay).
    master = await RedisServer.start({ dir: join(dir, "master"), config: ["repl-diskless-sync-delay 0"] });
    first = await RedisServer.start({
      dir: join(dir, "first"),
      config: [`replicaof 127.0.0.1 ${master.port}`],
    });
    await waitFor(
      async () => /slave0:.*state=online/.test(await info(master)),
      10_000,
      "the first replica in sync",
    );
    proxy = await heldProxy(master.port);
    connection = new RedisConnection({ kind: "single", url: `redis://127.0.0.1:${master.port}` });
    await connection.resolveWait("auto", log);
  }, 30_000);
  afterAll(async () => {
    connection?.close();
    proxy?.close();
    // Killed, not stopped: a master stopped with a replica behind waits for it (shutdown-timeout).
    await Promise.all([late?.kill(), first?.kill(), master?.kill()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("is not acknowledged while that replica lacks it, and that replica promoted indeed lacks it", async () => {
    const durability = connection.durability(log);
    // The count is read with one replica in sync.
    await durableWrite(connection.client, durability, "k", [["set", "k", "before"]]);
    expect((await durability.required("k")).replicas).toBe(1);
    // A second replica joins (through a proxy that can stop its link) and is in sync.
    const proxyPort = Number(new URL(proxy.url).port);
    late = await RedisServer.start({ dir: join(dir, "late"), config: [`replicaof 127.0.0.1 ${proxyPort}`] });
    await waitFor(
      async () => (await info(master)).match(/state=online/g)?.length === 2,
      10_000,
      "the late replica in sync",
    );
    // The master lists a replica in sync once it has sent the snapshot, before the replica
    // has loaded it: wait for the replica's own word, and the value there.
    const reader = late.client();
    try {
      await waitFor(
        async () =>
          /master_link_status:up/.test(await reader.info("replication")) &&
          (await reader.get("k")) === "before",
        10_000,
        "the late replica loaded",
      );
    } finally {
      reader.disconnect();
    }
    // Its link stalls: the master still lists it in sync, it receives nothing more.
    proxy.stall();
    const outcome = await durableWrite(connection.client, durability, "k", [["set", "k", "after"]]).then(
      () => "acknowledged",
      (err: unknown) => err,
    );
    // Promoted now (as the sentinels may), it has the value from before the stall only.
    const promoted = late.client();
    try {
      await promoted.call("REPLICAOF", "NO", "ONE");
      expect(await promoted.get("k")).toBe("before");
    } finally {
      promoted.disconnect();
    }
    expect(outcome).toBeInstanceOf(ReplicaWaitError);
    // The count follows the master's replicas in sync at once, not at the next refresh.
    expect((await durability.required("k")).replicas).toBe(2);
  }, 30_000);
});

/**
 * A process started while its master had no replica in sync (everything brought up at
 * once) waits for the replica that joins later, instead of never waiting for one.
 */
describe("a replica that joins after the process started", () => {
  const dir = mkdtempSync(join(tmpdir(), "rg-durable-join-"));
  let master: RedisServer;
  let replica: RedisServer | undefined;
  let proxy: HeldProxy;
  let connection: RedisConnection;
  const { log, lines } = capturingLogger();
  beforeAll(async () => {
    master = await RedisServer.start({ dir: join(dir, "master"), config: ["repl-diskless-sync-delay 0"] });
    proxy = await heldProxy(master.port);
    connection = new RedisConnection({ kind: "single", url: `redis://127.0.0.1:${master.port}` });
  }, 30_000);
  afterAll(async () => {
    connection?.close();
    proxy?.close();
    await Promise.all([replica?.kill(), master?.kill()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("waits for it once it is in sync", async () => {
    expect(await connection.resolveWait("auto", log)).toBe(0);
    const durability = connection.durability(log);
    await durableWrite(connection.client, durability, "k", [["set", "k", "alone"]]);
    const proxyPort = Number(new URL(proxy.url).port);
    replica = await RedisServer.start({
      dir: join(dir, "replica"),
      config: [`replicaof 127.0.0.1 ${proxyPort}`],
    });
    await waitFor(
      async () => /slave0:.*state=online/.test(await info(master)),
      10_000,
      "the replica in sync",
    );
    // Writes keep coming; within a refresh or two the count takes the replica in.
    await waitFor(
      async () => {
        await durableWrite(connection.client, durability, "k", [["set", "k", "joined"]]);
        return (await durability.required("k")).replicas === 1;
      },
      15_000,
      "the joined replica counted",
    );
    expect(lines().some((l) => l.msg === "a Redis replica joined: writes wait for replicas")).toBe(true);
    // Its link stalls: a write it does not get is not acknowledged.
    proxy.stall();
    const outcome = await durableWrite(connection.client, durability, "k", [["set", "k", "stalled"]]).then(
      () => "acknowledged",
      (err: unknown) => err,
    );
    expect(outcome).toBeInstanceOf(ReplicaWaitError);
  }, 40_000);
});

async function info(node: RedisServer): Promise<string> {
  const client = node.client();
  try {
    return await client.info("replication");
  } finally {
    client.disconnect();
  }
}
