import type { Update } from "grammy/types";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { UpdateAside } from "../../src/telegram/update-aside.js";
import { testTopology, type TestTopology } from "../support/test-topology.js";
import { waitFor } from "../support/wait.js";

const BOT = 4343;

function update(id: number): Update {
  return {
    update_id: id,
    message: { message_id: id, date: 0, chat: { id: 502, type: "private", first_name: "A" }, text: `m${id}` },
  } as Update;
}

/**
 * On a Cluster an update set aside is written to one shard per master, each with its
 * own replica wait, not to every shard (12 shards over 3 masters were 12 writes and 12
 * WAITs per batch): copies on one master are kept or lost with it, so one per master is
 * what keeps a copy while another range is down. A real Cluster of 3 masters with a
 * replica each; the masters' own command counts (INFO commandstats) are what is counted.
 */
describe("updates set aside on a Cluster", () => {
  let topology: TestTopology;
  let masters: Redis[];

  beforeAll(async () => {
    topology = await testTopology("cluster");
    masters = (await topology.cluster!.masters()).map((node) => node.client());
  }, 90_000);

  afterAll(async () => {
    for (const master of masters ?? []) master.disconnect();
    await topology?.cleanup();
  });

  /** Per master, how many times it ran each of `commands` since the last reset. */
  async function counts(commands: string[]): Promise<Record<string, number>[]> {
    return Promise.all(
      masters.map(async (master) => {
        const info = await master.info("commandstats");
        return Object.fromEntries(
          commands.map((c) => [c, Number(new RegExp(`cmdstat_${c}:calls=(\\d+)`).exec(info)?.[1] ?? 0)]),
        );
      }),
    );
  }

  it("writes one copy per master, each waiting for its replica, and removes it there", async () => {
    const aside = new UpdateAside(
      topology.redis,
      topology.keys,
      BOT,
      silentLogger(),
      topology.connection.durability(silentLogger()),
    );
    expect(masters).toHaveLength(3);
    for (const master of masters) await master.config("RESETSTAT");

    await aside.put([update(1), update(2)]);
    // put resolves with the first copy kept: wait until every master has run a write.
    await waitFor(
      async () => (await counts(["wait"])).every((c) => (c.wait ?? 0) >= 1),
      10_000,
      "each master's replica wait",
    );
    expect(await counts(["hset", "wait"])).toEqual(masters.map(() => ({ hset: 1, wait: 1 })));
    expect((await aside.load()).map((u) => u.update_id)).toEqual([1, 2]);

    aside.remove(1);
    await waitFor(
      async () => (await counts(["hdel"])).every((c) => (c.hdel ?? 0) >= 1),
      10_000,
      "the copies removed on each master",
    );
    expect((await aside.load()).map((u) => u.update_id)).toEqual([2]);
    expect(await counts(["hset", "hdel"])).toEqual(masters.map(() => ({ hset: 1, hdel: 1 })));
  }, 60_000);
});
