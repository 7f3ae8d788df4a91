import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisServersIn } from "../../src/cli/redis-dir-lock.js";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 4401, first_name: "Alice" };

let standin: TelegramApiStandin;
let good: StandinBot;
let db: TestRedis;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  good = standin.addBot({ username: "good_feed_bot" });
  db = await testRedis();
});
afterAll(async () => {
  await db.cleanup();
  await standin.close();
});

/** Processes whose environment carries the marker: the namespace children of one test. */
function processesWith(marker: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`RG_MARKER=${marker}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function exited(p: RoomgateProcess): Promise<number | null> {
  if (p.child.exitCode !== null) return Promise.resolve(p.child.exitCode);
  return new Promise((resolve) => p.child.once("exit", resolve));
}

function config(marker: string, bots: { token: string }[], extra: Record<string, unknown> = {}) {
  return {
    namespaces: {
      feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed", RG_MARKER: marker } },
    },
    telegram: {
      apiRoot: standin.url,
      bots: bots.map((b) => ({ token: b.token, namespace: "feed", users: [ALICE.id] })),
    },
    ...extra,
  };
}

describe("a failed roomgate start", () => {
  it("reports every configuration error before starting Redis or any namespace", async () => {
    const state = mkdtempSync(join(tmpdir(), "rg-state-"));
    const marker = randomUUID();
    const bad = config(marker, [{ token: good.token }]);
    (bad.telegram as Record<string, unknown>).mode = "webhook";
    (bad.telegram.bots[0] as Record<string, unknown>).namespace = "fed";
    const p = RoomgateProcess.start(bad, { ROOMGATE_STATE_DIR: state });
    expect(await exited(p)).toBe(1);
    expect(p.output).toContain("the configuration has 2 errors");
    expect(p.output).toContain('telegram.bots[0].namespace: unknown namespace "fed" (known: feed)');
    expect(p.output).toContain('telegram.webhook: required when telegram.mode is "webhook"');
    expect(existsSync(join(state, "redis"))).toBe(false);
    expect(processesWith(marker)).toEqual([]);
  });

  it("leaves no redis-server and no namespace child behind, however often it fails", async () => {
    const state = mkdtempSync(join(tmpdir(), "rg-state-"));
    const marker = randomUUID();
    // A token the Bot API does not know: getMe answers 401.
    const refused = { token: "999001:not-a-known-token" };
    for (let run = 0; run < 2; run++) {
      const p = RoomgateProcess.start(config(marker, [refused]), { ROOMGATE_STATE_DIR: state });
      expect(await exited(p)).toBe(1);
      expect(p.output).toContain("Telegram bot 999001 could not start");
      expect(p.output).not.toContain("not-a-known-token");
      expect(p.output).toContain("embedded redis-server started");
      expect(redisServersIn(join(state, "redis"))).toEqual([]);
      expect(processesWith(marker)).toEqual([]);
    }
  }, 60_000);

  it("stops a redis-server a killed roomgate left behind, so two never share the data folder", async () => {
    const state = mkdtempSync(join(tmpdir(), "rg-state-"));
    const dir = join(state, "redis");
    const marker = randomUUID();
    const first = RoomgateProcess.start(config(marker, [good]), { ROOMGATE_STATE_DIR: state });
    await waitFor(() => standin.isPolling(good.token), 20_000, "the bot to poll");
    const own = redisServersIn(dir);
    expect(own).toHaveLength(1);
    first.child.kill("SIGKILL");
    await exited(first);
    // Its redis-server ends with it (a parent-death signal), with no exit handler run.
    await waitFor(() => redisServersIn(dir).length === 0, 10_000, "the embedded redis-server to end");
    // One started without that signal (another build, a system without setpriv) stays: the next start stops it.
    const stray = spawn(
      "redis-server",
      [
        "--port",
        String(await freePort()),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "no",
      ],
      { stdio: "ignore", detached: true },
    );
    stray.unref();
    await waitFor(() => redisServersIn(dir).length === 1, 10_000, "the stray redis-server");
    const orphan = redisServersIn(dir);

    const second = RoomgateProcess.start(config(marker, [good]), { ROOMGATE_STATE_DIR: state });
    try {
      await waitFor(
        () => second.output.includes("embedded redis-server started"),
        20_000,
        "the second start",
      );
      expect(second.output).toContain("stopping a redis-server left running");
      const now = redisServersIn(dir);
      expect(now).toHaveLength(1);
      expect(now).not.toEqual(orphan);
      // A second live process on the same folder is refused rather than sharing it.
      const third = RoomgateProcess.start(config(marker, [good]), { ROOMGATE_STATE_DIR: state });
      expect(await exited(third)).toBe(1);
      expect(third.output).toContain(`is in use by roomgate process ${second.child.pid}`);
      expect(redisServersIn(dir)).toEqual(now);
    } finally {
      expect(await second.stop()).toBe(0);
    }
    expect(redisServersIn(dir)).toEqual([]);
  }, 60_000);
});

describe("a start that cannot work", () => {
  it("names every part that failed on its own line, a Matrix DNS failure as such, with no stack and no token", async () => {
    const shortToken = "998:xyz";
    const p = RoomgateProcess.start({
      redis: { url: db.url, prefix: `${db.prefix}-all-failed` },
      namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
      telegram: { apiRoot: standin.url, bots: [{ token: shortToken, namespace: "feed", users: [ALICE.id] }] },
      matrix: {
        homeserver: "https://homeserver.roomgate-start.invalid",
        accessToken: "syt_any_token_at_all",
        rooms: [{ room: "!ops:example.org", namespace: "feed", users: ["@alice:example.org"] }],
      },
    });
    expect(await exited(p)).toBe(1);
    const fatal = p.output.slice(p.output.indexOf("roomgate: could not start:"));
    expect(fatal).toMatch(
      /^roomgate: could not start:\n {2}telegram: Telegram bot 998 could not start .*\n {2}matrix: The Matrix homeserver is not reachable: the name homeserver\.roomgate-start\.invalid was not found \(DNS: (ENOTFOUND|EAI_AGAIN)\)\.\n$/,
    );
    expect(p.output).not.toMatch(/\n\s+at /);
    expect(p.output).not.toContain("did not accept a message");
    expect(p.output).not.toContain(shortToken);
  }, 90_000);

  it("says a port in use in one line, without a stack trace", async () => {
    const busy = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const p = RoomgateProcess.start(
        config(randomUUID(), [good], {
          redis: { url: db.url, prefix: `${db.prefix}-busy` },
          http: { host: "127.0.0.1", port },
        }),
      );
      expect(await exited(p)).toBe(1);
      expect(p.output).toContain(
        `roomgate: could not start health server: 127.0.0.1:${port} is in use by another process (set another port, or stop it)\n`,
      );
      expect(p.output).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  }, 60_000);
});

describe("one bot with a bad token", () => {
  it("is reported, the other bot keeps answering, and /healthz names it as degraded, its 7-character token masked", async () => {
    const port = await freePort();
    const marker = randomUUID();
    // Seven characters: masking goes by value, however short (a 45-character one always was).
    const shortToken = "999:abc";
    const p = RoomgateProcess.start(
      config(marker, [{ token: shortToken }, good], {
        redis: { url: db.url, prefix: `${db.prefix}-degraded` },
        http: { host: "127.0.0.1", port },
      }),
    );
    try {
      await waitFor(() => standin.isPolling(good.token), 20_000, "the good bot to poll");
      standin.userSends(good.token, { from: ALICE, text: "show me the feed" });
      await waitFor(() => standin.botMessages(good.token, ALICE.id).length === 1, 20_000, "an answer");
      const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as {
        status: string;
        degraded: { component: string; reason: string }[];
      };
      expect(health.status).toBe("degraded");
      expect(health.degraded.map((d) => d.component)).toEqual(["telegram bot 999 (namespace feed)"]);
      expect(health.degraded[0]!.reason).toContain("Unauthorized");
      expect(JSON.stringify(health)).not.toContain(shortToken);
      expect(p.output).not.toContain(shortToken);
    } finally {
      expect(await p.stop()).toBe(0);
    }
    expect(processesWith(marker)).toEqual([]);
  }, 60_000);
});

describe("every Telegram bot refused while a Matrix room is bound", () => {
  it("keeps the Matrix room answering and shows the bot degraded", async () => {
    const hs = await MatrixHomeserverStandin.start();
    const botUser = hs.registerUser("roomgate");
    const alice = hs.registerUser("alice").userId;
    const roomId = hs.createRoom(alice, { members: [botUser.userId] });
    const port = await freePort();
    const p = RoomgateProcess.start({
      redis: { url: db.url, prefix: `${db.prefix}-mx` },
      http: { host: "127.0.0.1", port },
      namespaces: {
        runs: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "runs" } },
        feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } },
      },
      telegram: { apiRoot: standin.url, bots: [{ token: "999003:refused-too", namespace: "feed" }] },
      matrix: {
        homeserver: hs.url,
        accessToken: botUser.accessToken,
        rooms: [{ room: roomId, namespace: "runs", users: [alice], respond: "all" }],
      },
    });
    try {
      await waitFor(() => p.output.includes("matrix receiver syncing"), 20_000, "the Matrix receiver");
      const asked = hs.sendText(roomId, alice, "what runs do I have?");
      await hs.waitForEvent(
        roomId,
        (e) =>
          e.sender === botUser.userId &&
          (e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.[
            "m.in_reply_to"
          ]?.event_id === asked.event_id,
        20_000,
      );
      const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as {
        status: string;
        degraded: { component: string }[];
      };
      expect(health.status).toBe("degraded");
      expect(health.degraded.map((d) => d.component)).toContain("telegram bot 999003 (namespace feed)");
    } finally {
      expect(await p.stop()).toBe(0);
      await hs.close();
    }
  }, 60_000);
});

describe("a 7-character Telegram token in a network error", () => {
  it("is masked in the log and in /healthz, where the error quotes the request's URL", async () => {
    const hs = await MatrixHomeserverStandin.start();
    const botUser = hs.registerUser("roomgate");
    const port = await freePort();
    const shortToken = "997:pqr";
    const p = RoomgateProcess.start({
      redis: { url: db.url, prefix: `${db.prefix}-mask` },
      http: { host: "127.0.0.1", port },
      namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
      // Nothing listens on port 1: grammY's error names the URL, token and all.
      telegram: { apiRoot: "http://127.0.0.1:1", bots: [{ token: shortToken, namespace: "feed" }] },
      matrix: { homeserver: hs.url, accessToken: botUser.accessToken, encryption: "off", rooms: [] },
    });
    try {
      await waitFor(() => p.output.includes("a receiver could not start"), 30_000, "the bot's failure");
      const health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).text();
      expect(health).toContain("/bot[secret]/getMe");
      expect(health).not.toContain(shortToken);
      expect(p.output).toContain("/bot[secret]/getMe");
      expect(p.output).not.toContain(shortToken);
    } finally {
      expect(await p.stop()).toBe(0);
      await hs.close();
    }
  }, 60_000);
});
