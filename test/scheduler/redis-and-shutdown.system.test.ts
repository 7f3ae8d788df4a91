import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime } from "../../src/runtime.js";
import { startEmbeddedRedis, type EmbeddedRedis } from "../../src/sessions/embedded-redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { TestRooms } from "../support/test-room.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 951, first_name: "Alice" };

let standin: TelegramApiStandin;
let bot: StandinBot;
const processes: RoomgateProcess[] = [];

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot();
});
afterAll(async () => standin.close());
afterEach(() => {
  for (const p of processes.splice(0)) p.kill();
});

function service(
  redis: Record<string, unknown>,
  env: Record<string, string> = {},
  extra: Record<string, unknown> = {},
) {
  const demo = demoNamespaces(env, ["feed"]);
  const p = RoomgateProcess.start(
    {
      redis,
      namespaces: demo.config.namespaces,
      telegram: { apiRoot: standin.url, bots: [{ token: "${TOKEN}", namespace: "feed", users: [ALICE.id] }] },
      ...extra,
    },
    { TOKEN: bot.token, LOG_LEVEL: "info" },
  );
  processes.push(p);
  return { process: p, callLog: demo.callLog };
}

const exited = (p: RoomgateProcess) =>
  new Promise<number | null>((resolve) =>
    p.child.exitCode !== null ? resolve(p.child.exitCode) : p.child.once("exit", resolve),
  );

describe("Redis persistence and the embedded password", () => {
  let volatile: EmbeddedRedis;
  beforeAll(async () => {
    volatile = await startEmbeddedRedis({ dir: mkdtempSync(join(tmpdir(), "rg-volatile-")), persist: false });
  });
  afterAll(async () => volatile.stop());

  it("refuses to start on a Redis that does not persist, saying why and what to set", async () => {
    const { process: p } = service({ url: volatile.url, prefix: "vol" });
    expect(await exited(p)).toBe(1);
    expect(p.output).toContain("may not persist");
    expect(p.output).toContain("redis.volatile: true");
    expect(p.output).not.toContain(new URL(volatile.url).password);
  }, 30_000);

  it("runs on it when redis.volatile says the operator accepts the loss", async () => {
    const { process: p } = service({ url: volatile.url, prefix: "vol", volatile: true });
    await waitFor(() => p.output.includes("roomgate started"), 20_000, "start");
    expect(p.output).toContain("does not persist");
    expect(await p.stop()).toBe(0);
  }, 30_000);

  it("keeps the embedded server's random password in the state folder, readable by the owner only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rg-embedded-"));
    const redis = await startEmbeddedRedis({ dir, persist: false });
    try {
      expect(statSync(join(dir, "password")).mode & 0o777).toBe(0o600);
      const anonymous = new Redis(redis.port, "127.0.0.1", {
        enableReadyCheck: false,
        maxRetriesPerRequest: 0,
      });
      anonymous.on("error", () => undefined);
      await expect(anonymous.ping()).rejects.toThrow(/NOAUTH/);
      anonymous.disconnect();
      const owner = new Redis(redis.url);
      expect(await owner.ping()).toBe("PONG");
      owner.disconnect();
    } finally {
      await redis.stop();
    }
  });
});

describe("health and shutdown", () => {
  let db: TestRedis;
  beforeAll(async () => {
    db = await testRedis();
  });
  afterAll(async () => db.cleanup());

  it("/healthz answers 503 naming Redis within a second when Redis is down", async () => {
    const redis = await startEmbeddedRedis({
      dir: mkdtempSync(join(tmpdir(), "rg-health-")),
      persist: false,
    });
    const rooms = new TestRooms("feed");
    const runtime = await startRuntime({
      config: ConfigSchema.parse({
        ...demoNamespaces({}, ["feed"]).config,
        http: { host: "127.0.0.1", port: 0 },
      }),
      redisUrl: redis.url,
      prefix: "health",
      log: silentLogger(),
      platforms: [rooms.factory()],
    });
    const url = `http://127.0.0.1:${runtime.health!.port}/healthz`;
    expect((await fetch(url)).status).toBe(200);
    await redis.stop();
    const t = Date.now();
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    expect(Date.now() - t).toBeLessThan(1000);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      ok: false,
      redis: "down",
      down: expect.arrayContaining(["redis"]),
    });
    await runtime.stop(0);
  }, 30_000);

  it("SIGTERM drains for at most shutdown.graceSeconds, then hands the room to another worker at once", async () => {
    const redis = { url: db.url, prefix: db.prefix };
    const slow = service(
      redis,
      { DEMO_SLOW_MS: "8000" },
      { shutdown: { graceSeconds: 1 }, queue: { leaseSeconds: 30 } },
    );
    await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
    standin.userSends(bot.token, { from: ALICE, text: "what should I read today?" });
    await waitFor(() => callsIn(slow.callLog).some((c) => c.startsWith("feed.ask")), 20_000, "the slow ask");
    const t = Date.now();
    slow.process.child.kill("SIGTERM");
    expect(await exited(slow.process)).toBe(0);
    expect(Date.now() - t).toBeLessThan(4000);
    // Handed back, not left to its 30 s lease: a fresh worker answers right away.
    const next = service(redis);
    await waitFor(() => standin.botMessages(bot.token, ALICE.id).length === 1, 15_000, "the answer");
    expect(await next.process.stop()).toBe(0);
  }, 60_000);

  it("a second SIGTERM exits at once", async () => {
    const p = service(
      { url: db.url, prefix: `${db.prefix}b` },
      { DEMO_SLOW_MS: "8000" },
      { shutdown: { graceSeconds: 30 } },
    );
    await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
    standin.userSends(bot.token, { from: ALICE, text: "what should I read today?" });
    await waitFor(() => callsIn(p.callLog).some((c) => c.startsWith("feed.ask")), 20_000, "the slow ask");
    p.process.child.kill("SIGTERM");
    await waitFor(() => p.process.output.includes("shutting down"), 5000, "the drain");
    const t = Date.now();
    p.process.child.kill("SIGTERM");
    await exited(p.process);
    expect(Date.now() - t).toBeLessThan(1500);
  }, 60_000);
});
