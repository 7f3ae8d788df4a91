import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHOSEN_MARK } from "../../src/matrix/matrix-sender.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import {
  registerWithSharedSecret,
  type SynapseEvent,
  type SynapseUser,
} from "../support/matrix-synapse-client.js";
import { runsAnswer } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { callsIn, demoNamespaces } from "../support/spine.js";

const homeserver = process.env.SYNAPSE_URL;
const sharedSecret = process.env.SYNAPSE_SHARED_SECRET;

const relation = (e: SynapseEvent) =>
  e.content["m.relates_to"] as
    { event_id?: string; key?: string; "m.in_reply_to"?: { event_id?: string } } | undefined;

/**
 * The "done when" as an operator would do it: the `roomgate start -c
 * config.yaml` process, its token from the environment, one room bound to `runs`
 * on a real Synapse, and a whole conversation with an allowed user.
 */
describe.skipIf(!homeserver || !sharedSecret)("`roomgate start` on a real Synapse", () => {
  let redis: TestRedis;
  let roomgate: RoomgateProcess;
  let bot: SynapseUser;
  let alice: SynapseUser;
  let roomId: string;
  let callLog: string;

  beforeAll(async () => {
    redis = await testRedis();
    bot = await registerWithSharedSecret(homeserver!, sharedSecret!, "roomgate");
    alice = await registerWithSharedSecret(homeserver!, sharedSecret!, "alice");
    roomId = await alice.createRoom("roomgate start e2e");
    const demo = demoNamespaces({}, ["runs"]);
    callLog = demo.callLog;
    roomgate = RoomgateProcess.start(
      {
        redis: { url: redis.url, prefix: redis.prefix },
        namespaces: demo.config.namespaces,
        matrix: {
          homeserver,
          accessToken: "${MATRIX_TOKEN}",
          rooms: [{ room: roomId, namespace: "runs", users: [alice.userId], respond: "all" }],
        },
      },
      { MATRIX_TOKEN: bot.accessToken },
    );
  });
  afterAll(async () => {
    roomgate?.kill();
    await redis?.cleanup();
  });

  const answerTo = (eventId: string, except: string[] = []) =>
    alice.waitFor(
      roomId,
      (e) =>
        e.sender === bot.userId &&
        e.type === "m.room.message" &&
        relation(e)?.["m.in_reply_to"]?.event_id === eventId &&
        !except.includes(e.event_id),
    );
  const reactionsOn = async (eventId: string) =>
    (await alice.messages(roomId))
      .filter((e) => e.sender === bot.userId && e.type === "m.reaction" && relation(e)?.event_id === eventId)
      .map((e) => relation(e)?.key);

  it("joins on invite, answers with the caveat, asks back, takes a keycap, and stops cleanly", async () => {
    await expect.poll(() => roomgate.output, { timeout: 60_000 }).toContain("matrix receiver syncing");
    await alice.invite(roomId, bot.userId);
    await expect.poll(() => alice.membership(roomId, bot.userId), { timeout: 30_000 }).toBe("join");

    const question = "which arm of my sweep won?";
    const expected = runsAnswer("runs.ask", { question });
    const answer = await answerTo(await alice.say(roomId, question));
    expect(String(answer.content.body)).toContain(expected.answer);
    expect(String(answer.content.body)).toContain(expected.caveat!);

    const asked = await alice.say(roomId, "hello there");
    const offer = await answerTo(asked);
    await expect.poll(() => reactionsOn(offer.event_id), { timeout: 30_000 }).toEqual(KEYCAPS.slice(0, 3));
    await alice.react(roomId, offer.event_id, KEYCAPS[2]);
    const listed = await answerTo(asked, [offer.event_id]);
    expect(String(listed.content.body)).toContain(runsAnswer("runs.list").answer);
    await expect.poll(() => reactionsOn(offer.event_id), { timeout: 30_000 }).toContain(CHOSEN_MARK);
    expect(callsIn(callLog).map((line) => line.split("\t")[0])).toEqual([
      "runs.ask",
      "runs.ask",
      "runs.list",
    ]);

    expect(await roomgate.stop()).toBe(0);
    expect(roomgate.output).not.toContain(bot.accessToken);
  });
});
