import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis, type RedisOptions } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisSentinelTopology } from "../../bench/support/redis-topology.js";
import { buildClient } from "../../src/sessions/redis-client-builder.js";
import { staysFalse, waitFor } from "../support/wait.js";

/**
 * A Sentinel group of its own for one describe block, with a roomgate client on it
 * (`extra`: options over the product's) and `listen` to hear every sentinel's
 * `+switch-master`; all stopped after the block.
 */
function sentinelUnderTest(
  name: string,
  topology: { replicas: number; downAfterMs?: number },
  extra: RedisOptions = {},
): {
  group: () => RedisSentinelTopology;
  client: () => Redis;
  listen: (onSwitch: (message: string) => void) => Promise<void>;
} {
  let dir: string;
  let group: RedisSentinelTopology;
  let client: Redis;
  const listeners: Redis[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `rg-${name}-`));
    group = await RedisSentinelTopology.start({ dir, sentinels: 3, ...topology });
    client = buildClient({ kind: "sentinel", name: group.name, nodes: group.urls }, extra) as Redis;
    await client.ping();
  }, 60_000);
  afterAll(async () => {
    for (const l of listeners) l.disconnect();
    client?.disconnect();
    await group?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    group: () => group,
    client: () => client,
    async listen(onSwitch) {
      for (const sentinel of group.sentinels) {
        const listener = new Redis({ port: sentinel.port });
        listeners.push(listener);
        listener.on("message", (_channel: string, message: string) => onSwitch(message));
        await listener.subscribe("+switch-master");
      }
    },
  };
}

/**
 * A Sentinel client reconnects once per failover, to the new master: every sentinel
 * announces the switch (`+switch-master`), the leader last, once the other replica
 * follows the new master — the moment a master with `min-replicas-to-write` starts
 * taking writes. Reconnecting to the master it already has then cost about a second
 * of answers after every switchover.
 */
describe("a Sentinel client through a switchover (1 master, 2 replicas, 3 sentinels)", () => {
  const under = sentinelUnderTest("switch", { replicas: 2 });

  it("reconnects once, to the new master, not again at each sentinel's announcement", async () => {
    const group = under.group();
    const client = under.client();
    const announced: string[] = [];
    await under.listen((message) => announced.push(message));
    const old = await group.master();
    let readies = 0;
    client.on("ready", () => (readies += 1));
    await group.failover();
    const now = await group.promotedFrom(old);
    // Every sentinel has announced it, the leader last (after the other replica follows).
    await waitFor(
      () => announced.length >= group.sentinels.length,
      30_000,
      "every sentinel announcing the switch",
    );
    await waitFor(() => readies >= 1 && client.status === "ready", 10_000, "the client reconnected");
    // Reconnecting again takes ~0.1-0.3 s after an announcement; none comes.
    await staysFalse(() => readies > 1, 1500, "a second reconnect");
    expect((client as unknown as { stream: { remotePort: number } }).stream.remotePort).toBe(now.port);
    expect(await client.set("after", "switch")).toBe("OK");
  }, 90_000);
});

/**
 * A Sentinel client that lost its master waits between tries (its back-off, up to 2 s
 * by default); the sentinels' announcement of the promoted master ends that wait, so
 * that every process reaches the new master at the announcement, not up to a back-off
 * apart (a worker booked sends 0.4 s before the receiver whose outage notice they had
 * to count reached Redis).
 */
describe("a Sentinel client whose master died, between its reconnect tries", () => {
  /** Far longer than the promotion takes: a client that waits it out fails the test. */
  const BACKOFF_MS = 60_000;
  const under = sentinelUnderTest(
    "switch-kill",
    { replicas: 1, downAfterMs: 1000 },
    { retryStrategy: () => BACKOFF_MS },
  );

  it("tries again at the sentinels' announcement, not at its back-off's end", async () => {
    const group = under.group();
    const client = under.client();
    let announcedAt: number | undefined;
    await under.listen(() => (announcedAt ??= Date.now()));
    const old = await group.master();
    await old.kill();
    await waitFor(() => client.status === "reconnecting", 10_000, "the client between tries");
    const now = await group.promotedFrom(old);
    await waitFor(() => announcedAt, 30_000, "a sentinel announcing the switch");
    await waitFor(() => client.status === "ready", BACKOFF_MS / 2, "the client on the promoted master");
    expect((client as unknown as { stream: { remotePort: number } }).stream.remotePort).toBe(now.port);
    expect(await client.set("after", "kill")).toBe("OK");
  }, 90_000);
});
