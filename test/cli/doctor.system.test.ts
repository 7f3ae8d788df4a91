import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import { startEmbeddedRedis, type EmbeddedRedis } from "../../src/sessions/embedded-redis.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { DEMO_SERVER } from "../support/spine.js";
import { waitFor } from "../support/wait.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";

/** A token of 7 characters: masked however short. */
const SHORT_TOKEN = "123:abc";

let telegram: TelegramApiStandin;
let matrix: MatrixHomeserverStandin;
let good: StandinBot;
/** A bot whose webhook Telegram could not deliver to: nothing listens at its URL. */
let hooked: StandinBot;
/** A loopback port nothing listens on. */
let closedPort: number;
let volatile: EmbeddedRedis;
let busy: Server;
let busyPort: number;
const dir = mkdtempSync(join(tmpdir(), "roomgate-doctor-"));

beforeAll(async () => {
  telegram = await TelegramApiStandin.start();
  good = telegram.addBot({ username: "doctor_feed_bot", topics: false });
  matrix = await MatrixHomeserverStandin.start();
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  closedPort = (closed.address() as { port: number }).port;
  await new Promise((resolve) => closed.close(resolve));
  hooked = telegram.addBot({ username: "doctor_hooked_bot" });
  const set = await fetch(
    `${telegram.url}/bot${hooked.token}/setWebhook?url=${encodeURIComponent(`http://127.0.0.1:${closedPort}/telegram`)}`,
  );
  expect(set.ok).toBe(true);
  telegram.userSends(hooked.token, { from: { id: 5, first_name: "Alice" }, text: "hello" });
  await waitFor(
    () => telegram.webhookDeliveries.some((d) => d.botId === hooked.id && d.status === 0),
    10_000,
    "a failed webhook delivery",
  );
  // A Redis that keeps nothing across a restart (no AOF, no snapshots).
  volatile = await startEmbeddedRedis({
    dir: mkdtempSync(join(tmpdir(), "roomgate-doctor-redis-")),
    persist: false,
  });
  // Another program's port: it hangs up on whoever connects (the doctor asks it for /healthz).
  busy = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(async () => {
  await telegram.close();
  await matrix.close();
  await volatile.stop();
  await new Promise((resolve) => busy.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const demo = (ns: string, extra: Record<string, unknown> = {}) => ({
  command: [process.execPath, DEMO_SERVER],
  env: { ATTEST_TOOLS: ns },
  ...extra,
});

function doctor(name: string, config: Record<string, unknown>, env: Record<string, string>) {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, stringify(config));
  const inherited: NodeJS.ProcessEnv = { ...process.env, ROOMGATE_STATE_DIR: join(dir, `${name}-state`) };
  delete inherited.REDIS_URL;
  const child = spawn(process.execPath, ["bin/roomgate", "doctor", "-c", file], {
    env: { ...inherited, ...env },
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  return new Promise<{ code: number | null; out: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, out })),
  );
}

describe("roomgate doctor", () => {
  it("finds nothing wrong in a configuration that works, and exits 0", async () => {
    const mx = matrix.registerUser("doctorbot");
    const run = await doctor(
      "good",
      {
        redis: { url: inject("redisUrl"), prefix: "doctor" },
        http: { host: "127.0.0.1", port: 0 },
        namespaces: { feed: demo("feed") },
        telegram: { apiRoot: telegram.url, bots: [{ token: "${TG}", namespace: "feed", users: [5] }] },
        matrix: {
          homeserver: matrix.url,
          accessToken: "${MX}",
          encryption: "off",
          rooms: [{ room: "!ops:standin.test", namespace: "feed", users: ["@alice:standin.test"] }],
        },
      },
      { TG: good.token, MX: mx.accessToken },
    );
    expect(run.out).toContain(
      "ok       namespace feed: started, 7 tools, its router feed.ask keeps the Answer contract",
    );
    expect(run.out).toContain(
      "ok       telegram bot @doctor_feed_bot (telegram.bots[0]): the token is accepted",
    );
    expect(run.out).toContain(
      `ok       matrix @doctorbot:standin.test on ${new URL(matrix.url).host}: the access token is accepted, device STANDIN`,
    );
    expect(run.out).toMatch(/ok {7}redis 127\.0\.0\.1:\d+: reachable, persists its data/);
    expect(run.out).toContain("No problems: roomgate start has what it needs.");
    expect(run.code).toBe(0);
  }, 60_000);

  it("names each failure made on purpose on one line with its fix, masks a 7-character token, and exits 1", async () => {
    const run = await doctor(
      "broken",
      {
        redis: { url: volatile.url, prefix: "doctor" },
        http: { host: "127.0.0.1", port: busyPort },
        namespaces: {
          feed: demo("feed", { ask: "feed.asks" }),
          gone: { command: ["/no/such/binary"] },
        },
        telegram: {
          apiRoot: telegram.url,
          bots: [
            { token: "${TG_SHORT}", namespace: "feed", users: [5] },
            { token: good.token, topics: [{ name: "Feed", namespace: "feed" }], users: [5] },
            { token: hooked.token, namespace: "feed", users: [5] },
          ],
        },
        matrix: {
          homeserver: "https://homeserver.roomgate-doctor.invalid",
          accessToken: "${MX}",
          rooms: [{ room: "!ops:example.org", namespace: "gone", users: ["@alice:example.org"] }],
        },
      },
      { TG_SHORT: SHORT_TOKEN, MX: "syt_not_a_real_token_anywhere" },
    );
    const lines = run.out.split("\n");
    const problem = (text: string, fix: string) => {
      const at = lines.findIndex((l) => l.startsWith("PROBLEM") && l.includes(text));
      expect(at, `a PROBLEM line with "${text}" in:\n${run.out}`).toBeGreaterThanOrEqual(0);
      expect(lines[at + 1]).toMatch(/^ {9}fix: /);
      expect(lines[at + 1]).toContain(fix);
    };
    problem(`http: 127.0.0.1:${busyPort} is in use by another process`, "set http.port to a free port");
    problem(
      "namespace feed: the router feed.asks is not one of the server's tools; did you mean feed.ask?",
      "set namespaces.feed.ask",
    );
    problem(
      "namespace gone: the program /no/such/binary is not found",
      "give its full path in namespaces.gone.command",
    );
    problem(
      "telegram bot 123 (telegram.bots[0]): Telegram refused the token (401",
      "copy the token from @BotFather",
    );
    problem(
      "telegram bot @doctor_feed_bot (telegram.bots[1]): topics are configured but the bot's topic mode is off",
      "turn on threaded mode",
    );
    problem(
      "matrix homeserver homeserver.roomgate-doctor.invalid: not reachable: the name homeserver.roomgate-doctor.invalid was not found (DNS",
      "check matrix.homeserver",
    );
    problem(`redis 127.0.0.1:${volatile.port}: the Redis roomgate would use`, "turn on appendonly");
    expect(run.out).toContain(
      "note     telegram bot @doctor_hooked_bot (telegram.bots[2]): a webhook is set (http://127.0.0.1:",
    );
    expect(run.out).toMatch(/\n7 problems: roomgate start would not work as configured\.\n$/);
    expect(run.out).not.toContain(SHORT_TOKEN);
    expect(run.code).toBe(1);
  }, 60_000);

  it("names a Redis it cannot reach, and a webhook Telegram could not deliver to, each with its fix", async () => {
    const run = await doctor(
      "unreachable",
      {
        redis: { url: `redis://127.0.0.1:${closedPort}` },
        namespaces: { feed: demo("feed") },
        telegram: {
          apiRoot: telegram.url,
          mode: "webhook",
          webhook: { url: "https://bot.example.org/telegram", secretToken: "s".repeat(32) },
          bots: [{ token: "${TG_HOOKED}", namespace: "feed", users: [5] }],
        },
      },
      { TG_HOOKED: hooked.token },
    );
    const lines = run.out.split("\n");
    const at = (text: string) => lines.findIndex((l) => l.startsWith("PROBLEM") && l.includes(text));
    const redis = at(`redis 127.0.0.1:${closedPort}: not reachable`);
    expect(redis, run.out).toBeGreaterThanOrEqual(0);
    expect(lines[redis + 1]).toContain("fix: start it, or fix REDIS_URL / the redis section");
    const hook = at(
      "telegram bot @doctor_hooked_bot (telegram.bots[0]): Telegram's last delivery to the webhook failed: Connection refused",
    );
    expect(hook, run.out).toBeGreaterThanOrEqual(0);
    expect(lines[hook + 1]).toContain("fix: check that telegram.webhook.url reaches this host");
    expect(run.out).toMatch(/\n2 problems: roomgate start would not work as configured\.\n$/);
    expect(run.code).toBe(1);
  }, 60_000);

  it("names a token the homeserver refuses, and a configuration error before trying anything", async () => {
    const refused = await doctor(
      "refused",
      {
        namespaces: { feed: demo("feed") },
        matrix: {
          homeserver: matrix.url,
          accessToken: "${MX}",
          encryption: "off",
          rooms: [{ room: "!ops:standin.test", namespace: "feed", users: ["@alice:standin.test"] }],
        },
      },
      { MX: "syt_refused_by_the_stand_in" },
    );
    expect(refused.out).toContain("the access token was refused (401 M_UNKNOWN_TOKEN");
    expect(refused.code).toBe(1);
    const invalid = await doctor(
      "invalid",
      {
        namespaces: { feed: demo("feed") },
        http: { port: 99999 },
        telegram: { bots: [{ token: "${RG_DOCTOR_UNSET}", namespace: "feed", users: [5] }] },
      },
      {},
    );
    const lines = invalid.out.split("\n");
    const unset = lines.findIndex((l) => l.includes("environment variable RG_DOCTOR_UNSET is not set"));
    expect(unset, invalid.out).toBeGreaterThanOrEqual(0);
    // The fix is in the environment file beside the configuration, not in the configuration.
    expect(lines[unset + 1]).toBe(`         fix: put RG_DOCTOR_UNSET=… in ${join(dir, ".env")}`);
    expect(invalid.out).toContain("PROBLEM  configuration: http.port: a port is a number from 0 to 65535");
    expect(invalid.out).toContain("the configuration must be valid before the rest can be tried");
    expect(invalid.out).not.toContain("namespace feed");
    expect(invalid.code).toBe(1);
  }, 60_000);
});
