import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { createMatrixPlatform } from "../../src/matrix/matrix-platform.js";
import { CHOSEN_MARK } from "../../src/matrix/matrix-sender.js";
import { registry } from "../../src/ops/metrics.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { MatrixHomeserverStandin, type StandinEvent } from "../support/matrix-homeserver-standin.js";
import { FAST_RETRY, runsAnswer } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { eventually } from "../support/wait.js";

const inReplyTo = (e: StandinEvent): string | undefined =>
  (e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.["m.in_reply_to"]
    ?.event_id;

describe("a Matrix conversation through startRuntime, the stand-in and the demo runs server", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let runtime: Runtime;
  let bot: string;
  let alice: string;
  let mallory: string;
  let roomId: string;
  let strangersRoom: string;
  let encryptedRoom: string;
  let callLog: string;
  let start: () => Promise<Runtime>;

  beforeAll(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    const botUser = hs.registerUser("roomgate");
    bot = botUser.userId;
    alice = hs.registerUser("alice").userId;
    mallory = hs.registerUser("mallory").userId;
    roomId = hs.createRoom(alice, { name: "ops", members: [mallory] });
    strangersRoom = hs.createRoom(mallory, { name: "lure" });
    encryptedRoom = hs.createRoom(alice, { name: "secret", members: [bot], encrypted: true });
    const demo = demoNamespaces({}, ["runs"]);
    callLog = demo.callLog;
    const config = ConfigSchema.parse({
      namespaces: demo.config.namespaces,
      matrix: {
        homeserver: hs.url,
        accessToken: botUser.accessToken,
        rooms: [
          { room: roomId, namespace: "runs", users: [alice], respond: "all" },
          { room: strangersRoom, namespace: "runs", users: [alice], respond: "all" },
          { room: encryptedRoom, namespace: "runs", users: [alice], respond: "all" },
        ],
      },
    });
    const platform = createMatrixPlatform({ syncTimeoutMs: 300, retry: FAST_RETRY, typingRefreshMs: 200 });
    start = () =>
      startRuntime({
        config,
        redisUrl: redis.url,
        prefix: redis.prefix,
        log: silentLogger(),
        platforms: [platform],
      });
    runtime = await start();
  });
  afterAll(async () => {
    await runtime?.stop();
    await hs.close();
    await redis.cleanup();
  });

  /** Waits for the bot's first notice that replies to `eventId`. */
  const answerTo = (eventId: string, timeoutMs = 20_000): Promise<StandinEvent> =>
    hs.waitForEvent(
      roomId,
      (e) => e.sender === bot && e.type === "m.room.message" && inReplyTo(e) === eventId,
      timeoutMs,
    );
  const reactionsOn = (eventId: string): string[] =>
    hs.sentBy(roomId, bot, "m.reaction").flatMap((e) => {
      const rel = e.content["m.relates_to"] as { event_id: string; key: string };
      return rel.event_id === eventId ? [rel.key] : [];
    });
  const tools = (): string[] => callsIn(callLog).map((line) => line.split("\t")[0] ?? "");

  it("joins the bound room on the allowed user's invite, and declines a stranger's", async () => {
    hs.invite(roomId, alice, bot);
    hs.invite(strangersRoom, mallory, bot);
    await eventually(() => {
      expect(hs.membership(roomId, bot)).toBe("join");
      expect(hs.membership(strangersRoom, bot)).toBe("leave");
    }, 10_000);
  });

  it("answers a question verbatim, caveat included, as a notice in reply to it", async () => {
    const question = "which arm of my sweep won?";
    const expected = runsAnswer("runs.ask", { question });
    expect(expected.caveat).toBeTruthy();
    const askedAt = Date.now();
    const asked = hs.sendText(roomId, alice, question);
    const answer = await answerTo(asked.event_id);
    const tookMs = Date.now() - askedAt;
    expect(answer.content.msgtype).toBe("m.notice");
    expect(String(answer.content.body)).toContain(expected.answer);
    expect(String(answer.content.body)).toContain(expected.caveat!);
    expect(String(answer.content.formatted_body)).toContain("<blockquote>");
    expect(tools()).toEqual(["runs.ask"]);
    // Typing is shown only once a turn has run for about a second, never for a quick answer.
    if (tookMs < 900) expect(hs.typing.filter((t) => t.userId === bot && t.typing)).toEqual([]);
  });

  it("asks back with keycaps; a keycap reaction runs the chosen tool; a second reaction runs nothing", async () => {
    const asked = hs.sendText(roomId, alice, "hello there");
    const offer = await answerTo(asked.event_id);
    expect(String(offer.content.body)).toContain(runsAnswer("runs.ask", { question: "hello there" }).answer);
    await eventually(() => expect(reactionsOn(offer.event_id)).toEqual(KEYCAPS.slice(0, 3)));
    hs.react(roomId, alice, offer.event_id, KEYCAPS[2]);
    const listed = await hs.waitForEvent(
      roomId,
      (e) => e.sender === bot && inReplyTo(e) === asked.event_id && e.event_id !== offer.event_id,
      20_000,
    );
    expect(String(listed.content.body)).toContain(runsAnswer("runs.list").answer);
    await eventually(() => expect(reactionsOn(offer.event_id)).toContain(CHOSEN_MARK));
    expect(tools()).toEqual(["runs.ask", "runs.ask", "runs.list"]);

    hs.react(roomId, alice, offer.event_id, KEYCAPS[0]);
    const refused = await hs.waitForEvent(
      roomId,
      (e) =>
        e.sender === bot && e.type === "m.room.message" && String(e.content.body).includes("already made"),
      20_000,
    );
    expect(refused.content.msgtype).toBe("m.notice");
    expect(tools()).toEqual(["runs.ask", "runs.ask", "runs.list"]);
  });

  it("takes a reply with the option's number as the choice", async () => {
    const asked = hs.sendText(roomId, alice, "good morning");
    const offer = await answerTo(asked.event_id);
    const reply = hs.sendText(roomId, alice, "3", { replyTo: offer.event_id });
    const listed = await answerTo(reply.event_id);
    expect(String(listed.content.body)).toContain(runsAnswer("runs.list").answer);
    expect(tools().slice(-2)).toEqual(["runs.ask", "runs.list"]);
    await eventually(() => expect(reactionsOn(offer.event_id)).toContain(CHOSEN_MARK));
  });

  it("fills the argument it asks for with a text file, downloaded through the media API", async () => {
    const asked = hs.sendText(roomId, alice, "are the numbers in my draft right?");
    const offer = await answerTo(asked.event_id);
    hs.react(roomId, alice, offer.event_id, KEYCAPS[0]);
    const prompt = await hs.waitForEvent(
      roomId,
      (e) => e.sender === bot && inReplyTo(e) === asked.event_id && e.event_id !== offer.event_id,
      20_000,
    );
    expect(String(prompt.content.body)).toContain("draft");
    const draft = "# Results\nkd-0.5 reached 7.9 WER on eval-v1.\n";
    const file = hs.sendFile(roomId, alice, { name: "draft.md", mime: "text/markdown", data: draft });
    const checked = await answerTo(file.event_id);
    expect(String(checked.content.body)).toContain(runsAnswer("runs.claims_check", { draft }).answer);
    expect(callsIn(callLog).at(-1)).toBe(`runs.claims_check\t${JSON.stringify({ draft })}`);
  });

  it("refuses a stranger in the bound room without calling the namespace", async () => {
    const before = tools().length;
    const asked = hs.sendText(roomId, mallory, "which arm of my sweep won?");
    const refusal = await answerTo(asked.event_id);
    expect(String(refusal.content.body)).toContain("not allowed");
    const notices = hs.sentBy(roomId, bot, "m.room.message").length;
    const offer = hs.sentBy(roomId, bot, "m.reaction").at(-1)!.content["m.relates_to"] as {
      event_id: string;
    };
    hs.react(roomId, mallory, offer.event_id, KEYCAPS[0]);
    hs.sendText(roomId, mallory, "please?");
    // Alice's next question is the barrier: a room's events are taken and answered in order,
    // so anything of Mallory's that got through would have been answered before it.
    const barrier = hs.sendText(roomId, alice, "what runs do I have?");
    await answerTo(barrier.event_id);
    expect(tools().slice(before)).toEqual(["runs.ask"]);
    expect(hs.sentBy(roomId, bot, "m.room.message")).toHaveLength(notices + 1);
  });

  it("without a store key sends nothing into the encrypted room, not even a notice", async () => {
    hs.sendText(encryptedRoom, alice, "anyone?");
    await answerTo(hs.sendText(roomId, alice, "which arm of my sweep won?").event_id);
    expect(hs.sentBy(encryptedRoom, bot).filter((e) => e.state_key === undefined)).toEqual([]);
  });

  it("replays nothing old after a restart, and answers what came in while it was down", async () => {
    const before = tools().length;
    const answered = hs.sentBy(roomId, bot, "m.room.message").length;
    await runtime.stop();
    const whileDown = hs.sendText(roomId, alice, "which arm of my sweep won?");
    runtime = await start();
    await answerTo(whileDown.event_id);
    const fresh = hs.sendText(roomId, alice, "what runs do I have?");
    // Anything replayed would have been queued before the fresh question, and answered first.
    await answerTo(fresh.event_id);
    expect(tools().slice(before)).toEqual(["runs.ask", "runs.ask"]);
    expect(hs.sentBy(roomId, bot, "m.room.message")).toHaveLength(answered + 2);
    expect(hs.sentBy(encryptedRoom, bot).filter((e) => e.state_key === undefined)).toEqual([]);
  });
  it("waits out a 429's retry_after_ms for every process, with the worker slot given back, then answers once", async () => {
    hs.failNext(1, { status: 429, errcode: "M_LIMIT_EXCEEDED", retryAfterMs: 1500 });
    const t = Date.now();
    const asked = hs.sendText(roomId, alice, "which arm of my sweep won?");
    await answerTo(asked.event_id);
    expect(Date.now() - t).toBeGreaterThanOrEqual(1500);
    const answers = hs.sentBy(roomId, bot, "m.room.message").filter((e) => inReplyTo(e) === asked.event_id);
    expect(answers).toHaveLength(1);
    // The wait was the scheduler's (a hold in Redis, counted), not a sleep inside the send.
    expect(await registry.metrics()).toMatch(
      /roomgate_rate_limited_total\{platform="matrix",method="send m.room.message"\} [1-9]/,
    );
    expect(await registry.metrics()).toMatch(
      /roomgate_send_deferrals_total\{platform="matrix",reason="429"\} [1-9]/,
    );
  });
});
