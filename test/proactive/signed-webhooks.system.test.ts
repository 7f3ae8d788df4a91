import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signHook } from "../../src/proactive/hook-signature.js";
import { testTopology, type TestTopology } from "../support/test-topology.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

// Signed webhooks through real HTTP into `roomgate start`, answered in a Telegram room
// of the stand-in: a good delivery is one answer; every refused one queues nothing.

const ALICE = { id: 1601, first_name: "Alice" };
const SECRET = "ci-hook-secret-0123456789";

let standin: TelegramApiStandin;
let bot: StandinBot;
let db: TestTopology;
let roomgate: RoomgateProcess;
let callLog: string;
let base: string;

/** Nothing queued, held or being answered in Alice's room (each key read alone: a Cluster may be under test). */
async function drained(): Promise<boolean> {
  const room = `telegram:${bot.id}:${ALICE.id}`;
  for (const key of [db.schedulerKeys.inbox(room), db.schedulerKeys.lease(room), db.schedulerKeys.turn(room)])
    if ((await db.redis.exists(key)) === 1) return false;
  return true;
}

function hookMessages(): string[] {
  return standin
    .botMessages(bot.token, ALICE.id)
    .map((m) => m.text ?? "")
    .filter((t) => t.includes("🪝 Webhook"));
}

async function post(
  name: string,
  body: string,
  options: { delivery?: string; secret?: string; timestamp?: number; signature?: string } = {},
): Promise<Response> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-roomgate-timestamp": timestamp,
    "x-roomgate-signature": options.signature ?? signHook(options.secret ?? SECRET, timestamp, body),
  };
  if (options.delivery !== undefined) headers["x-roomgate-delivery"] = options.delivery;
  return fetch(`${base}/hooks/${name}`, { method: "POST", headers, body });
}

beforeAll(async () => {
  standin = await TelegramApiStandin.start({ perChatRate: true });
  bot = standin.addBot({ username: "runs_hook_bot" });
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
      http: { port: 0, host: "127.0.0.1" },
      hooks: [
        {
          name: "ci",
          room,
          secret: "${HOOK_CI_SECRET}",
          ask: "search for {{ body.pipeline }}",
          maxBodyBytes: 2048,
        },
        { name: "burst", room, secret: "${HOOK_CI_SECRET}", perMinute: 2 },
        { name: "q", room, secret: "${HOOK_CI_SECRET}", ask: "{{ body.question }}" },
      ],
    },
    { TELEGRAM_FEED_TOKEN: bot.token, HOOK_CI_SECRET: SECRET, LOG_LEVEL: "info" },
  );
  await waitFor(
    () => /"port":\d+,"msg":"health and metrics listening"/.test(roomgate.output),
    30_000,
    "http",
  );
  base = `http://127.0.0.1:${/"port":(\d+),"msg":"health and metrics listening"/.exec(roomgate.output)![1]}`;
});

afterAll(async () => {
  await roomgate.stop();
  await db.cleanup();
  await standin.close();
});

describe("POST /hooks/<name>", () => {
  it("answers a good delivery in the room once, marked as a webhook, the body filled into the question", async () => {
    const res = await post("ci", JSON.stringify({ pipeline: "deploy-42" }), { delivery: "d-1" });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ accepted: true, delivery: "d-1" });
    await waitFor(() => hookMessages().length === 1, 20_000, "the hook's answer");
    expect(hookMessages()[0]).toContain('🪝 Webhook "ci"');
    expect(
      callsIn(callLog)
        .filter((l) => l.startsWith("feed.ask"))
        .join("\n"),
    ).toContain('"question":"search for deploy-42"');
  });

  it("refuses bad deliveries with the right status and queues none of them", async () => {
    const body = JSON.stringify({ pipeline: "evil" });
    // Well outside the 5-minute window both ways: the exact edge is tested on the pure
    // check (hook-signature.test.ts), where the clock does not move between the calls.
    const now = Math.floor(Date.now() / 1000);
    const statuses = {
      wrongSignature: (await post("ci", body, { delivery: "x-1", secret: "not-the-secret" })).status,
      noSignature: (await post("ci", body, { delivery: "x-2", signature: "" })).status,
      garbage: (await post("ci", body, { delivery: "x-3", signature: "sha256=zz" })).status,
      stale: (await post("ci", body, { delivery: "x-4", timestamp: now - 420 })).status,
      future: (await post("ci", body, { delivery: "x-5", timestamp: now + 420 })).status,
      unknown: (await post("nope", body, { delivery: "x-6" })).status,
      oversized: (await post("ci", JSON.stringify({ pipeline: "x".repeat(4096) }), { delivery: "x-7" }))
        .status,
      replayed: (await post("ci", JSON.stringify({ pipeline: "deploy-42" }), { delivery: "d-1" })).status,
      emptyQuestion: (
        await post("q", JSON.stringify({ question: " ", pipeline: "evil" }), { delivery: "x-8" })
      ).status,
    };
    expect(statuses).toEqual({
      wrongSignature: 401,
      noSignature: 401,
      garbage: 401,
      stale: 401,
      future: 401,
      // An unknown hook looks like a bad signature to a stranger (hook-strangers.system.test.ts).
      unknown: 401,
      oversized: 413,
      replayed: 200,
      emptyQuestion: 422,
    });
    // A captured request sent again under a new delivery id is the same signature: refused.
    const timestamp = Math.floor(Date.now() / 1000);
    const again = JSON.stringify({ pipeline: "again" });
    expect((await post("ci", again, { delivery: "r-1", timestamp })).status).toBe(202);
    expect((await post("ci", again, { delivery: "r-2", timestamp })).status).toBe(409);
    await waitFor(() => hookMessages().length === 2, 20_000, "the second good delivery");
    // The refused ones were answered before anything could queue them: once the room has
    // nothing left to do, whatever they queued would have been asked.
    await waitFor(drained, 20_000, "the room drained");
    expect(hookMessages()).toHaveLength(2);
    const asked = callsIn(callLog).filter((l) => l.startsWith("feed.ask"));
    expect(asked.join("\n")).not.toContain("evil");
    expect(asked.filter((l) => l.includes("deploy-42"))).toHaveLength(1);
  });

  it("answers 429 over the hook's rate and queues nothing for it; the whole body is the question without a template", async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await post("burst", `{"n":${i}}`, { delivery: `b-${i}` })).status);
    expect(statuses).toEqual([202, 202, 429]);
    await waitFor(
      () => hookMessages().filter((t) => t.includes('"burst"')).length === 2,
      20_000,
      "two bursts",
    );
    await waitFor(drained, 20_000, "the room drained");
    expect(hookMessages().filter((t) => t.includes('"burst"'))).toHaveLength(2);
    const asked = callsIn(callLog).filter((l) => l.startsWith("feed.ask"));
    expect(asked.filter((l) => l.includes('\\"n\\":'))).toHaveLength(2);
  });

  it("counts deliveries by hook, status and reason in /metrics", async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/roomgate_hook_deliveries_total\{hook="ci",status="202",reason="accepted"\} 2/);
    expect(text).toMatch(/roomgate_hook_deliveries_total\{hook="ci",status="401",reason="bad_signature"\} 3/);
    expect(text).toMatch(/roomgate_hook_deliveries_total\{hook="ci",status="401",reason="stale"\} 2/);
    expect(text).toMatch(/roomgate_hook_deliveries_total\{hook="",status="401",reason="unknown_hook"\} 1/);
    expect(text).toMatch(/roomgate_hook_deliveries_total\{hook="burst",status="429",reason="rate"\} 1/);
  });

  it("holds a delivery while the room is muted, once for a retried delivery id, and answers it when the mute ends", async () => {
    const said = (pattern: RegExp) =>
      standin.botMessages(bot.token, ALICE.id).filter((m) => pattern.test(m.text ?? "")).length;
    standin.userSends(bot.token, { from: ALICE, text: "/mute 1h" });
    await waitFor(() => said(/^Muted until/) === 1, 20_000, "the mute");
    const body = JSON.stringify({ pipeline: "muted-7" });
    const first = await post("ci", body, { delivery: "m-1" });
    expect(first.status).toBe(202);
    expect(await first.json()).toMatchObject({ accepted: true, held: true });
    // The sender retries (lost 202): the held delivery is not held twice.
    const retry = await post("ci", body, { delivery: "m-1" });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toMatchObject({ duplicate: true });
    const asked = () =>
      callsIn(callLog).filter((l) => l.startsWith("feed.ask") && l.includes("search for muted-7")).length;
    const before = hookMessages().length;
    // Held, not queued: the room has nothing to do while muted.
    await waitFor(drained, 20_000, "the room drained while muted");
    expect([asked(), hookMessages().length]).toEqual([0, before]);
    standin.userSends(bot.token, { from: ALICE, text: "/mute off" });
    await waitFor(() => hookMessages().length > before, 20_000, "the held delivery");
    await waitFor(drained, 20_000, "the room drained after the mute");
    expect([asked(), hookMessages().length]).toEqual([1, before + 1]);
    expect((await post("ci", body, { delivery: "m-1" })).status).toBe(200);
  });
});
