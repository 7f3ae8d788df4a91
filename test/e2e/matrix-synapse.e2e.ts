import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { createLogger } from "../../src/core/log.js";
import { matrixPlatform } from "../../src/matrix/matrix-platform.js";
import { CHOSEN_MARK } from "../../src/matrix/matrix-sender.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import {
  registerWithSharedSecret,
  type SynapseEvent,
  type SynapseUser,
} from "../support/matrix-synapse-client.js";
import { runsAnswer } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, demoNamespaces } from "../support/spine.js";

const homeserver = process.env.SYNAPSE_URL;
const sharedSecret = process.env.SYNAPSE_SHARED_SECRET;

const relation = (e: SynapseEvent) =>
  e.content["m.relates_to"] as
    | { event_id?: string; key?: string; rel_type?: string; "m.in_reply_to"?: { event_id?: string } }
    | undefined;

/**
 * A whole conversation against a real Synapse (started by scripts/synapse-e2e.sh,
 * which sets SYNAPSE_URL and SYNAPSE_SHARED_SECRET): users registered with the
 * shared secret, the bot invited, and question, caveat, ask-back, reaction, file
 * argument, stranger and restart through `startRuntime` with the demo runs server.
 */
describe.skipIf(!homeserver || !sharedSecret)("roomgate on a real Synapse", () => {
  let redis: TestRedis;
  let runtime: Runtime;
  let bot: SynapseUser;
  let alice: SynapseUser;
  let mallory: SynapseUser;
  let roomId: string;
  let callLog: string;
  let start: () => Promise<Runtime>;

  beforeAll(async () => {
    redis = await testRedis();
    bot = await registerWithSharedSecret(homeserver!, sharedSecret!, "roomgate");
    alice = await registerWithSharedSecret(homeserver!, sharedSecret!, "alice");
    mallory = await registerWithSharedSecret(homeserver!, sharedSecret!, "mallory");
    roomId = await alice.createRoom("roomgate e2e");
    const demo = demoNamespaces({}, ["runs"]);
    callLog = demo.callLog;
    const config = ConfigSchema.parse({
      namespaces: demo.config.namespaces,
      matrix: {
        homeserver,
        accessToken: bot.accessToken,
        rooms: [{ room: roomId, namespace: "runs", users: [alice.userId], respond: "all" }],
      },
    });
    const log = createLogger({ level: process.env.LOG_LEVEL ?? "warn" });
    start = () =>
      startRuntime({ config, redisUrl: redis.url, prefix: redis.prefix, log, platforms: [matrixPlatform] });
    runtime = await start();
  });
  afterAll(async () => {
    await runtime?.stop();
    await redis?.cleanup();
  });

  const fromBot = (e: SynapseEvent) => e.sender === bot.userId && e.type === "m.room.message";
  const answerTo = (eventId: string, except: string[] = []) =>
    alice.waitFor(
      roomId,
      (e) =>
        fromBot(e) && relation(e)?.["m.in_reply_to"]?.event_id === eventId && !except.includes(e.event_id),
    );
  const reactionsOn = async (eventId: string) =>
    (await alice.messages(roomId))
      .filter((e) => e.sender === bot.userId && e.type === "m.reaction" && relation(e)?.event_id === eventId)
      .map((e) => relation(e)?.key);
  const tools = () => callsIn(callLog).map((line) => line.split("\t")[0]);

  it("joins when the allowed user invites it", async () => {
    await alice.invite(roomId, bot.userId);
    await expect.poll(() => alice.membership(roomId, bot.userId), { timeout: 30_000 }).toBe("join");
  });

  it("answers a question verbatim with its caveat", async () => {
    const question = "which arm of my sweep won?";
    const expected = runsAnswer("runs.ask", { question });
    const answer = await answerTo(await alice.say(roomId, question));
    expect(answer.content.msgtype).toBe("m.notice");
    expect(String(answer.content.body)).toContain(expected.answer);
    expect(String(answer.content.body)).toContain(expected.caveat!);
    expect(String(answer.content.formatted_body)).toContain("<blockquote>");
  });

  it("asks back with keycaps, and runs the tool a keycap reaction chooses, once", async () => {
    const asked = await alice.say(roomId, "hello there");
    const offer = await answerTo(asked);
    await expect.poll(() => reactionsOn(offer.event_id), { timeout: 30_000 }).toEqual(KEYCAPS.slice(0, 3));
    await alice.react(roomId, offer.event_id, KEYCAPS[2]);
    const listed = await answerTo(asked, [offer.event_id]);
    expect(String(listed.content.body)).toContain(runsAnswer("runs.list").answer);
    await expect.poll(() => reactionsOn(offer.event_id), { timeout: 30_000 }).toContain(CHOSEN_MARK);
    const calls = tools().length;
    await alice.react(roomId, offer.event_id, KEYCAPS[0]);
    await alice.waitFor(roomId, (e) => fromBot(e) && String(e.content.body).includes("already made"));
    expect(tools()).toHaveLength(calls);
  });

  it("takes a reply with the option's number, and a text file as the argument it asks for", async () => {
    const asked = await alice.say(roomId, "are the numbers in my draft right?");
    const offer = await answerTo(asked);
    const reply = await alice.say(roomId, "1", offer.event_id);
    const prompt = await answerTo(reply);
    expect(String(prompt.content.body)).toContain("draft");
    const draft = "kd-0.5 reached 7.9 WER on eval-v1.\n";
    const checked = await answerTo(await alice.sendFile(roomId, "draft.md", "text/markdown", draft));
    expect(String(checked.content.body)).toContain(runsAnswer("runs.claims_check", { draft }).answer);
  });

  it("refuses a stranger without calling the namespace", async () => {
    await alice.invite(roomId, mallory.userId);
    await mallory.join(roomId);
    const calls = tools().length;
    const refusal = await answerTo(await mallory.say(roomId, "which arm of my sweep won?"));
    expect(String(refusal.content.body)).toContain("not allowed");
    expect(tools()).toHaveLength(calls);
  });

  it("after a restart answers what came in while it was down and nothing older", async () => {
    const before = (await alice.messages(roomId)).filter(fromBot).length;
    await runtime.stop();
    const whileDown = await alice.say(roomId, "what runs do I have?");
    runtime = await start();
    await answerTo(whileDown);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await alice.messages(roomId)).filter(fromBot)).toHaveLength(before + 1);
  });
});
