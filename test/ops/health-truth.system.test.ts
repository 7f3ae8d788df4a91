import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, RedisServer } from "../../src/sessions/redis-server.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

/**
 * /healthz of a real `roomgate start` tells the truth about Redis: not ready within
 * 5 s of Redis becoming unreachable (hung with its sockets open, or gone), naming the
 * part that is stuck and why, and ready again once Redis is back — with the message
 * that arrived meanwhile answered.
 */
const ALICE = { id: 7401, first_name: "Alice" };

interface Health {
  ok: boolean;
  down?: string[];
  stuck?: { part: string; reason: string }[];
}

describe("/healthz while Redis is unreachable", () => {
  const dir = mkdtempSync(join(tmpdir(), "rg-health-truth-"));
  let redis: RedisServer;
  let standin: TelegramApiStandin;
  let bot: StandinBot;
  let roomgate: RoomgateProcess;
  let port: number;

  beforeAll(async () => {
    redis = await RedisServer.start({ dir: join(dir, "redis") });
    standin = await TelegramApiStandin.start();
    bot = standin.addBot();
    port = await freePort();
    roomgate = RoomgateProcess.start({
      redis: { url: redis.url, prefix: "health" },
      http: { host: "127.0.0.1", port },
      namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
      telegram: { apiRoot: standin.url, bots: [{ token: bot.token, namespace: "feed", users: [ALICE.id] }] },
    });
    await waitFor(() => standin.isPolling(bot.token), 30_000, "the bot to poll");
  }, 60_000);

  afterAll(async () => {
    await roomgate?.stop();
    await standin?.close();
    await redis?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  const health = async (): Promise<{ status: number; body: Health }> => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(3000) });
    return { status: res.status, body: (await res.json()) as Health };
  };

  /** Milliseconds from now until /healthz answers `wanted` (200 or not), asked every 100 ms. */
  async function untilHealth(wanted: "ready" | "not ready"): Promise<number> {
    const since = Date.now();
    await waitFor(
      async () => ((await health()).status === 200) === (wanted === "ready"),
      30_000,
      `/healthz ${wanted}`,
    );
    return Date.now() - since;
  }

  async function answered(n: number): Promise<void> {
    await waitFor(() => standin.botMessages(bot.token, ALICE.id).length >= n, 30_000, `answer ${n}`);
  }

  it("is ready while all works", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "what should I read? 1" });
    await answered(1);
    expect((await health()).status).toBe(200);
  });

  it("goes not ready within 5 s of a hung Redis, names what is stuck, and is ready again when it wakes", async () => {
    process.kill(redis.pid!, "SIGSTOP");
    try {
      expect(await untilHealth("not ready")).toBeLessThan(5000);
      standin.userSends(bot.token, { from: ALICE, text: "what should I read? 2" });
      // The poller and the silent clients are named once they have been stuck a while.
      const stuck = await waitFor(
        async () => {
          const { body } = await health();
          const parts = body.stuck?.map((s) => s.part) ?? [];
          return parts.includes("redis") && parts.includes("telegram") ? body : undefined;
        },
        15_000,
        "redis and the poller named as stuck",
      );
      expect(stuck.down).toEqual(expect.arrayContaining(["redis", "telegram"]));
      const reasons = Object.fromEntries(stuck.stuck!.map((s) => [s.part, s.reason]));
      expect(reasons.redis).toMatch(/client "shared" answered nothing for \d+ s/);
      expect(reasons.telegram).toMatch(/could not queue update \d+ for \d+ s/);
    } finally {
      process.kill(redis.pid!, "SIGCONT");
    }
    expect(await untilHealth("ready")).toBeLessThan(5000);
    await answered(2);
  }, 60_000);

  it("goes not ready within 5 s of Redis going away, and is ready again within 5 s of its return", async () => {
    await redis.kill();
    expect(await untilHealth("not ready")).toBeLessThan(5000);
    standin.userSends(bot.token, { from: ALICE, text: "what should I read? 3" });
    await redis.start();
    expect(await untilHealth("ready")).toBeLessThan(5000);
    await answered(3);
  }, 60_000);
});
