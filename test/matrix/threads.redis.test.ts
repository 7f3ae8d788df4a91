import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { matrixRoom } from "../../src/core/room.js";
import { createMatrixPlatform } from "../../src/matrix/matrix-platform.js";
import { edgeTexts } from "../../src/edge/edge-texts.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { MatrixHomeserverStandin, type StandinEvent } from "../support/matrix-homeserver-standin.js";
import { FAST_RETRY, runsAnswer } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { demoNamespaces } from "../support/spine.js";
import { eventually } from "../support/wait.js";

type Relation = { rel_type?: string; event_id?: string; "m.in_reply_to"?: { event_id?: string } };
const relation = (e: StandinEvent) => e.content["m.relates_to"] as Relation | undefined;

describe("Matrix threads as rooms (fake homeserver, real Redis, queue and demo runs server)", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let runtime: Runtime;
  let bot: string;
  let alice: string;
  let mallory: string;
  let roomId: string;

  beforeAll(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    const botUser = hs.registerUser("roomgate");
    bot = botUser.userId;
    alice = hs.registerUser("alice").userId;
    mallory = hs.registerUser("mallory").userId;
    roomId = hs.createRoom(alice, { name: "ops", members: [bot, mallory] });
    const demo = demoNamespaces({}, ["runs"]);
    runtime = await startRuntime({
      config: ConfigSchema.parse({
        namespaces: demo.config.namespaces,
        matrix: {
          homeserver: hs.url,
          accessToken: botUser.accessToken,
          rooms: [{ room: roomId, namespace: "runs", users: [alice], respond: "all" }],
        },
      }),
      redisUrl: redis.url,
      prefix: redis.prefix,
      log: silentLogger(),
      platforms: [createMatrixPlatform({ syncTimeoutMs: 300, retry: FAST_RETRY, typingRefreshMs: 200 })],
    });
  });
  afterAll(async () => {
    await runtime?.stop();
    await hs.close();
    await redis.cleanup();
  });

  const answerTo = (eventId: string): Promise<StandinEvent> =>
    hs.waitForEvent(
      roomId,
      (e) =>
        e.sender === bot &&
        e.type === "m.room.message" &&
        relation(e)?.["m.in_reply_to"]?.event_id === eventId,
      20_000,
    );
  const conversation = async (room: string): Promise<string | undefined> => {
    const raw = await redis.redis.get(redis.schedulerKeys.session(room));
    return raw === null ? undefined : (JSON.parse(raw) as { conversationId: string }).conversationId;
  };

  it("answers a thread in the thread, as a session of its own; the main timeline keeps the room's", async () => {
    const main = hs.sendText(roomId, alice, "which arm of my sweep won?");
    const mainAnswer = await answerTo(main.event_id);
    expect(relation(mainAnswer)?.rel_type).toBeUndefined();

    const root = hs.sendText(roomId, alice, "a thread about the sweep");
    await answerTo(root.event_id);
    const inThread = hs.sendText(roomId, alice, "which arm of my sweep won?", { threadRoot: root.event_id });
    const threadAnswer = await answerTo(inThread.event_id);
    expect(relation(threadAnswer)).toMatchObject({ rel_type: "m.thread", event_id: root.event_id });
    expect(String(threadAnswer.content.body)).toContain(
      runsAnswer("runs.ask", { question: "which arm of my sweep won?" }).answer,
    );

    const roomKey = matrixRoom(roomId);
    const threadKey = matrixRoom(roomId, root.event_id);
    expect(threadKey).toBe(`matrix:${roomId}:${root.event_id}`);
    const [roomConversation, threadConversation] = [
      await conversation(roomKey),
      await conversation(threadKey),
    ];
    expect(roomConversation).toBeDefined();
    expect(threadConversation).toBeDefined();
    expect(threadConversation).not.toBe(roomConversation);
  });

  it("keeps a thread's offer to the thread: a number in the main timeline leaves it open, a keycap there chooses", async () => {
    const root = hs.sendText(roomId, alice, "another thread");
    await answerTo(root.event_id);
    const asked = hs.sendText(roomId, alice, "hello there", { threadRoot: root.event_id });
    const offer = await answerTo(asked.event_id);
    expect(relation(offer)).toMatchObject({ rel_type: "m.thread", event_id: root.event_id });
    // "3" in the main timeline belongs to the room's session: answered there, the thread's offer untouched.
    const three = hs.sendText(roomId, alice, "3");
    expect(relation(await answerTo(three.event_id))?.rel_type).toBeUndefined();
    await eventually(() =>
      expect(
        hs
          .sentBy(roomId, bot, "m.reaction")
          .filter((e) => (e.content["m.relates_to"] as { event_id: string }).event_id === offer.event_id),
      ).toHaveLength(3),
    );
    hs.react(roomId, alice, offer.event_id, KEYCAPS[2]);
    const listed = await hs.waitForEvent(
      roomId,
      (e) =>
        e.sender === bot &&
        e.type === "m.room.message" &&
        e.event_id !== offer.event_id &&
        relation(e)?.["m.in_reply_to"]?.event_id === asked.event_id,
      20_000,
    );
    expect(relation(listed)).toMatchObject({ rel_type: "m.thread", event_id: root.event_id });
    expect(String(listed.content.body)).toContain(runsAnswer("runs.list").answer);
  });

  it("refuses a stranger inside the thread they wrote in, once an hour for the whole room", async () => {
    const root = hs.sendText(roomId, alice, "a thread mallory joins");
    await answerTo(root.event_id);
    const asked = hs.sendText(roomId, mallory, "let me in", { threadRoot: root.event_id });
    const refusal = await answerTo(asked.event_id);
    expect(String(refusal.content.body)).toContain("not allowed");
    expect(relation(refusal)).toMatchObject({ rel_type: "m.thread", event_id: root.event_id });
    // Another thread earns no second refusal within the hour.
    const other = hs.sendText(roomId, alice, "yet another thread");
    await answerTo(other.event_id);
    const again = hs.sendText(roomId, mallory, "and here?", { threadRoot: other.event_id });
    const later = hs.sendText(roomId, alice, "which arm of my sweep won?", { threadRoot: other.event_id });
    await answerTo(later.event_id);
    expect(
      hs
        .sentBy(roomId, bot, "m.room.message")
        .filter((e) => relation(e)?.["m.in_reply_to"]?.event_id === again.event_id),
    ).toEqual([]);
  });
});

describe("Matrix flood notices in a thread", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let runtime: Runtime;

  afterAll(async () => {
    await runtime?.stop();
    await hs.close();
    await redis.cleanup();
  });

  it("sends the too-fast notice into the thread that went too fast", async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    const botUser = hs.registerUser("roomgate");
    const alice = hs.registerUser("alice").userId;
    const roomId = hs.createRoom(alice, { name: "busy", members: [botUser.userId] });
    runtime = await startRuntime({
      config: ConfigSchema.parse({
        namespaces: demoNamespaces({}, ["runs"]).config.namespaces,
        limits: { turnsPerMinute: 2 },
        matrix: {
          homeserver: hs.url,
          accessToken: botUser.accessToken,
          rooms: [{ room: roomId, namespace: "runs", users: [alice], respond: "all" }],
        },
      }),
      redisUrl: redis.url,
      prefix: redis.prefix,
      log: silentLogger(),
      platforms: [createMatrixPlatform({ syncTimeoutMs: 300, retry: FAST_RETRY, typingRefreshMs: 200 })],
    });
    const root = hs.sendText(roomId, alice, "a busy thread");
    const asked = [1, 2, 3].map((n) =>
      hs.sendText(roomId, alice, `question ${n}`, { threadRoot: root.event_id }),
    );
    // The person's count is per shard (docs/reliability.md): the root's turn counts
    // against the thread only when the room and the thread hash to the same shard.
    const sameShard =
      redis.schedulerKeys.shardOf(matrixRoom(roomId)) ===
      redis.schedulerKeys.shardOf(matrixRoom(roomId, root.event_id));
    const over = asked[sameShard ? 1 : 2]!;
    const notice = await hs.waitForEvent(
      roomId,
      (e) => e.sender === botUser.userId && relation(e)?.["m.in_reply_to"]?.event_id === over.event_id,
      20_000,
    );
    expect(String(notice.content.body)).toContain(edgeTexts.tooFast(2));
    expect(relation(notice)).toMatchObject({ rel_type: "m.thread", event_id: root.event_id });
  });
});
