import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signHook } from "../../src/proactive/hook-signature.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { openRaw, sendFrom } from "../support/raw-http.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";
import { testTopology, type TestTopology } from "../support/test-topology.js";

// Issue 25, "nothing a stranger sends becomes a label, a log line per request or a held
// connection": each finding against the real listener of `roomgate start`. Each test
// sends from its own loopback address, as its own source.

const ALICE = { id: 2501, first_name: "Alice" };
const SECRET = "stranger-test-hook-secret-0123456789";
const REQUEST_TIMEOUT_S = 3;
const HEADERS_TIMEOUT_S = 2;
const MAX_CONNECTIONS = 16;
const BAD_SIGNATURES_PER_MINUTE = 20;

let standin: TelegramApiStandin;
let bot: StandinBot;
let db: TestTopology;
let roomgate: RoomgateProcess;
let callLog: string;
let port: number;

function signed(body: string, extra: Record<string, string> = {}, secret = SECRET): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    "content-type": "application/json",
    "x-roomgate-timestamp": timestamp,
    "x-roomgate-signature": signHook(secret, timestamp, body),
    ...extra,
  };
}

async function hookSeries(): Promise<string[]> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text.split("\n").filter((l) => l.startsWith("roomgate_hook_deliveries_total{"));
}

const lines = (pattern: RegExp) => roomgate.output.split("\n").filter((l) => pattern.test(l)).length;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot({ username: "strangers_hook_bot" });
  db = await testTopology();
  const demo = demoNamespaces({}, ["feed"]);
  callLog = demo.callLog;
  const room = `telegram:${bot.id}:${ALICE.id}`;
  roomgate = RoomgateProcess.start(
    {
      redis: db.config,
      namespaces: demo.config.namespaces,
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: "${TELEGRAM_FEED_TOKEN}", namespace: "feed", users: [ALICE.id] }],
      },
      http: {
        port: 0,
        host: "127.0.0.1",
        requestTimeoutSeconds: REQUEST_TIMEOUT_S,
        headersTimeoutSeconds: HEADERS_TIMEOUT_S,
        maxConnections: MAX_CONNECTIONS,
      },
      proactive: { badSignaturesPerMinute: BAD_SIGNATURES_PER_MINUTE },
      hooks: [
        { name: "ci", room, secret: "${HOOK_SECRET}", ask: "search for {{ body.pipeline }}" },
        { name: "burst", room, secret: "${HOOK_SECRET}", perMinute: 2 },
      ],
    },
    { TELEGRAM_FEED_TOKEN: bot.token, HOOK_SECRET: SECRET, LOG_LEVEL: "info" },
  );
  const listening = /"port":(\d+),"msg":"health and metrics listening"/;
  await waitFor(() => listening.test(roomgate.output), 30_000, "http");
  port = Number(listening.exec(roomgate.output)![1]);
});

afterAll(async () => {
  await roomgate.stop();
  await db.cleanup();
  await standin.close();
});

describe("issue 25: a stranger on the HTTP listener", () => {
  it("strangers grow the metrics: 5,000 GET and POST /hooks/<random> add no metric series", async () => {
    const before = await hookSeries();
    const sizeBefore = (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).length;
    const names = Array.from(
      { length: 5_000 },
      (_, i) => `probe-${i}-${Math.random().toString(36).slice(2)}`,
    );
    // Ten at a time: more would meet the connection cap, which has its own test.
    for (let i = 0; i < names.length; i += 10) {
      await Promise.all(
        names.slice(i, i + 10).map((name, j) =>
          sendFrom(port, {
            from: "127.0.0.11",
            method: j % 2 === 0 ? "GET" : "POST",
            path: `/hooks/${name}`,
            body: j % 2 === 0 ? undefined : "{}",
          }),
        ),
      );
    }
    const after = await hookSeries();
    const sizeAfter = (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).length;
    const labels = (series: string[]) => series.map((l) => l.replace(/ [\d.e+]+$/, ""));
    const added = labels(after).filter((l) => !labels(before).includes(l));
    // GET (405), POST (401, then 429 once the source is over its failures): one series each, hook="".
    expect(added.length).toBeLessThanOrEqual(3);
    expect(added.every((l) => l.includes('hook=""'))).toBe(true);
    expect(sizeAfter - sizeBefore).toBeLessThan(5_000);
    console.log(`5,000 probes: ${added.length} new series, /metrics ${sizeBefore} → ${sizeAfter} bytes`);
  }, 120_000);

  it("a body trickled at 1 byte a second is cut at http.requestTimeoutSeconds (408)", async () => {
    const raw = await openRaw(port, "127.0.0.12");
    raw.socket.write(
      "POST /hooks/ci HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
    );
    const trickle = setInterval(() => raw.socket.writable && raw.socket.write("{"), 1_000);
    const heldMs = await raw.closed;
    clearInterval(trickle);
    expect(raw.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(heldMs).toBeLessThan((REQUEST_TIMEOUT_S + 3) * 1000);
    console.log(`trickled body: connection closed after ${heldMs} ms`);
  }, 30_000);

  it("headers trickled at 1 byte a second are cut at http.headersTimeoutSeconds (408)", async () => {
    const raw = await openRaw(port, "127.0.0.13");
    raw.socket.write("POST /hooks/ci HTTP/1.1\r\n");
    const trickle = setInterval(() => raw.socket.writable && raw.socket.write("X"), 1_000);
    const heldMs = await raw.closed;
    clearInterval(trickle);
    expect(raw.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(heldMs).toBeLessThan((HEADERS_TIMEOUT_S + 3) * 1000);
  }, 30_000);

  it("connection cap: past http.maxConnections a connection is closed as it comes, unanswered", async () => {
    const held = await Promise.all(
      Array.from({ length: MAX_CONNECTIONS }, () => openRaw(port, "127.0.0.14")),
    );
    const extra = await openRaw(port, "127.0.0.14");
    const closedAfter = await extra.closed;
    // Closed by the cap, not by the headers timeout (which answers 408 first).
    expect(extra.received()).toBe("");
    expect(closedAfter).toBeLessThan(HEADERS_TIMEOUT_S * 1000);
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200,
      10_000,
      "the listener to answer again",
    );
  }, 30_000);

  it("wrong signatures are rate-limited per source: 300 tries, 20 of them checked, another source still delivers", async () => {
    const body = JSON.stringify({ pipeline: "guess" });
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 300; i++) {
      const res = await sendFrom(port, {
        from: "127.0.0.15",
        path: "/hooks/ci",
        headers: signed(body, { "x-roomgate-delivery": `g-${i}` }, `wrong-${i}`),
        body,
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, BAD_SIGNATURES_PER_MINUTE).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(BAD_SIGNATURES_PER_MINUTE).every((s) => s === 429)).toBe(true);
    // Even the right signature from that source waits out its minute.
    const good = JSON.stringify({ pipeline: "rate-ok" });
    const fromGuesser = await sendFrom(port, {
      from: "127.0.0.15",
      path: "/hooks/ci",
      headers: signed(good, { "x-roomgate-delivery": "rate-1" }),
      body: good,
    });
    expect(fromGuesser.status).toBe(429);
    const fromSender = await sendFrom(port, {
      from: "127.0.0.16",
      path: "/hooks/ci",
      headers: signed(good, { "x-roomgate-delivery": "rate-1" }),
      body: good,
    });
    expect(fromSender.status).toBe(202);
    console.log(
      `300 wrong signatures in ${Date.now() - started} ms: ${statuses.filter((s) => s === 401).length} × 401`,
    );
  }, 60_000);

  it("an unknown hook and a bad signature get the same status and body", async () => {
    const body = JSON.stringify({ pipeline: "probe" });
    const unknown = await sendFrom(port, {
      from: "127.0.0.17",
      path: "/hooks/nope",
      headers: signed(body),
      body,
    });
    const badSignature = await sendFrom(port, {
      from: "127.0.0.17",
      path: "/hooks/ci",
      headers: signed(body, {}, "not-the-secret"),
      body,
    });
    expect(unknown).toEqual(badSignature);
    expect(unknown).toEqual({ status: 401, body: '{"error":"bad_signature"}' });
    const getUnknown = await sendFrom(port, { from: "127.0.0.17", method: "GET", path: "/hooks/nope" });
    const getKnown = await sendFrom(port, { from: "127.0.0.17", method: "GET", path: "/hooks/ci" });
    expect(getUnknown).toEqual(getKnown);
  });

  it("replays under new delivery ids do not use up the hook's perMinute", async () => {
    const post = (body: string, headers: Record<string, string>) =>
      sendFrom(port, { from: "127.0.0.18", path: "/hooks/burst", headers, body });
    const first = '{"n":"first"}';
    const captured = signed(first, { "x-roomgate-delivery": "b-1" });
    expect((await post(first, captured)).status).toBe(202);
    // The sender's own retries of an accepted delivery: duplicates, no budget used.
    for (let i = 0; i < 3; i++) expect((await post(first, captured)).status).toBe(200);
    // Someone who captured it sends it again under new ids: refused, no budget used.
    for (let i = 0; i < 5; i++) {
      expect((await post(first, { ...captured, "x-roomgate-delivery": `evil-${i}` })).status).toBe(409);
    }
    const second = '{"n":"second"}';
    expect((await post(second, signed(second, { "x-roomgate-delivery": "b-2" }))).status).toBe(202);
    const third = '{"n":"third"}';
    expect((await post(third, signed(third, { "x-roomgate-delivery": "b-3" }))).status).toBe(429);
  });

  it("50 requests cut mid-body: answered 400 where the connection is open, at most one log line", async () => {
    const warned = /webhook bodies cut off or unreadable/;
    const failed = /webhook delivery could not be queued/;
    const before = [lines(warned), lines(failed)];
    const cut = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const raw = await openRaw(port, "127.0.0.19");
        raw.socket.write(
          'POST /hooks/ci HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"pipeline":',
        );
        raw.socket.end();
        await raw.closed;
        return raw.received();
      }),
    );
    const answered = cut.filter((r) => r !== "");
    expect(answered.every((r) => r.startsWith("HTTP/1.1 400"))).toBe(true);
    // One warning a minute at most (an earlier test's timed-out body may have written this minute's).
    expect(lines(warned) - before[0]!).toBeLessThanOrEqual(1);
    expect(lines(failed) - before[1]!).toBe(0);
    expect(lines(warned)).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it("a signed body nested 20,000 deep in a templated field gets 422, not 503", async () => {
    const body = `{"pipeline":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    const res = await sendFrom(port, {
      from: "127.0.0.20",
      path: "/hooks/ci",
      headers: signed(body, { "x-roomgate-delivery": "deep-1" }),
      body,
    });
    expect(res).toEqual({ status: 422, body: '{"error":"too_deep"}' });
    expect(roomgate.child.exitCode).toBeNull();
    expect(callsIn(callLog).some((l) => l.includes("[[[["))).toBe(false);
  });
});
