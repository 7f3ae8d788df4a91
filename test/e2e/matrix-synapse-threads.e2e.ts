import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { createLogger } from "../../src/core/log.js";
import { matrixRoom } from "../../src/core/room.js";
import { matrixPlatform } from "../../src/matrix/matrix-platform.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import {
  registerWithSharedSecret,
  type SynapseEvent,
  type SynapseUser,
} from "../support/matrix-synapse-client.js";
import { runsAnswer } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { demoNamespaces } from "../support/spine.js";

const homeserver = process.env.SYNAPSE_URL;
const sharedSecret = process.env.SYNAPSE_SHARED_SECRET;

type Relation = { rel_type?: string; event_id?: string; "m.in_reply_to"?: { event_id?: string } };
const relation = (e: SynapseEvent) => e.content["m.relates_to"] as Relation | undefined;

/**
 * Threads against a real Synapse (scripts/synapse-e2e.sh sets SYNAPSE_URL and
 * SYNAPSE_SHARED_SECRET): a thread is its own room and session, answered in the
 * thread, while the main timeline stays the room's.
 */
describe.skipIf(!homeserver || !sharedSecret)("Matrix threads on a real Synapse", () => {
  let redis: TestRedis;
  let runtime: Runtime;
  let bot: SynapseUser;
  let alice: SynapseUser;
  let mallory: SynapseUser;
  let roomId: string;

  beforeAll(async () => {
    redis = await testRedis();
    bot = await registerWithSharedSecret(homeserver!, sharedSecret!, "roomgate-threads");
    alice = await registerWithSharedSecret(homeserver!, sharedSecret!, "alice-threads");
    mallory = await registerWithSharedSecret(homeserver!, sharedSecret!, "mallory-threads");
    roomId = await alice.createRoom("roomgate threads e2e");
    const demo = demoNamespaces({}, ["runs"]);
    const config = ConfigSchema.parse({
      namespaces: demo.config.namespaces,
      matrix: {
        homeserver,
        accessToken: bot.accessToken,
        rooms: [{ room: roomId, namespace: "runs", users: [alice.userId], respond: "all" }],
      },
    });
    const log = createLogger({ level: process.env.LOG_LEVEL ?? "warn" });
    runtime = await startRuntime({
      config,
      redisUrl: redis.url,
      prefix: redis.prefix,
      log,
      platforms: [matrixPlatform],
    });
  });
  afterAll(async () => {
    await runtime?.stop();
    await redis?.cleanup();
  });

  const inThreadOf = (root: string, eventId: string) => ({
    msgtype: "m.text",
    "m.relates_to": {
      rel_type: "m.thread",
      event_id: root,
      is_falling_back: true,
      "m.in_reply_to": { event_id: eventId },
    },
  });
  /** The events Synapse itself counts in a thread (its relations API), by id. */
  const threadEvents = async (root: string): Promise<string[]> => {
    const path = `/_matrix/client/v1/rooms/${encodeURIComponent(roomId)}/relations/${encodeURIComponent(root)}/m.thread?limit=100`;
    const page = (await alice.request("GET", path)) as { chunk: SynapseEvent[] };
    return page.chunk.map((e) => e.event_id);
  };
  const answerTo = (eventId: string) =>
    alice.waitFor(
      roomId,
      (e) =>
        e.sender === bot.userId &&
        e.type === "m.room.message" &&
        relation(e)?.["m.in_reply_to"]?.event_id === eventId,
    );

  it("answers a thread in the thread, as its own session; the main timeline keeps the room's", async () => {
    await alice.invite(roomId, bot.userId);
    await expect.poll(() => alice.membership(roomId, bot.userId), { timeout: 30_000 }).toBe("join");
    const question = "which arm of my sweep won?";
    const root = await alice.say(roomId, question);
    expect(relation(await answerTo(root))?.rel_type).toBeUndefined();
    const inThread = await alice.send(roomId, "m.room.message", {
      msgtype: "m.text",
      body: question,
      "m.relates_to": {
        rel_type: "m.thread",
        event_id: root,
        is_falling_back: true,
        "m.in_reply_to": { event_id: root },
      },
    });
    const answer = await answerTo(inThread);
    expect(relation(answer)).toMatchObject({ rel_type: "m.thread", event_id: root });
    expect(String(answer.content.body)).toContain(runsAnswer("runs.ask", { question }).answer);
    await expect.poll(() => threadEvents(root), { timeout: 10_000 }).toContain(answer.event_id);
    const session = async (room: string) =>
      (
        JSON.parse((await redis.redis.get(redis.schedulerKeys.session(room))) ?? "{}") as {
          conversationId?: string;
        }
      ).conversationId;
    const [main, thread] = [await session(matrixRoom(roomId)), await session(matrixRoom(roomId, root))];
    expect(main).toBeDefined();
    expect(thread).toBeDefined();
    expect(thread).not.toBe(main);
  });

  it("refuses a stranger inside the thread, where Synapse itself counts the refusal", async () => {
    await alice.invite(roomId, mallory.userId);
    await mallory.join(roomId);
    const root = await alice.say(roomId, "a thread mallory joins");
    await answerTo(root);
    const asked = await mallory.send(roomId, "m.room.message", {
      ...inThreadOf(root, root),
      body: "let me in",
    });
    const refusal = await answerTo(asked);
    expect(String(refusal.content.body)).toContain("not allowed");
    expect(relation(refusal)).toMatchObject({ rel_type: "m.thread", event_id: root });
    await expect.poll(() => threadEvents(root), { timeout: 10_000 }).toContain(refusal.event_id);
  });
});
