import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYCAPS } from "../../src/render/matrix.js";
import { MatrixHomeserverStandin, type StandinEvent } from "../support/matrix-homeserver-standin.js";
import { runsAnswer } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { eventually } from "../support/wait.js";

const inReplyTo = (e: StandinEvent): string | undefined =>
  (e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.["m.in_reply_to"]
    ?.event_id;

describe("`roomgate start -c config.yaml` with one Matrix room bound to runs", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let roomgate: RoomgateProcess;
  let token: string;
  let bot: string;
  let alice: string;
  let roomId: string;
  let callLog: string;

  beforeAll(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    const botUser = hs.registerUser("roomgate");
    token = botUser.accessToken;
    bot = botUser.userId;
    alice = hs.registerUser("alice").userId;
    roomId = hs.createRoom(alice);
    const demo = demoNamespaces({}, ["runs"]);
    callLog = demo.callLog;
    roomgate = RoomgateProcess.start(
      {
        redis: { url: redis.url, prefix: redis.prefix },
        namespaces: demo.config.namespaces,
        matrix: {
          homeserver: hs.url,
          accessToken: "${MATRIX_TOKEN}",
          rooms: [{ room: roomId, namespace: "runs", users: [alice], respond: "all" }],
        },
      },
      { MATRIX_TOKEN: token, LOG_LEVEL: "debug" },
    );
  });
  afterAll(async () => {
    roomgate.kill();
    await hs.close();
    await redis.cleanup();
  });

  it("joins on invite, answers, asks back, takes a keycap, and stops on SIGTERM without leaking the token", async () => {
    await eventually(() => expect(roomgate.output).toContain("matrix receiver syncing"), 20_000);
    hs.invite(roomId, alice, bot);
    await eventually(async () => expect(await hs.membership(roomId, bot)).toBe("join"), 20_000);

    const question = "which arm of my sweep won?";
    const asked = hs.sendText(roomId, alice, question);
    const answer = await hs.waitForEvent(
      roomId,
      (e) => e.sender === bot && inReplyTo(e) === asked.event_id,
      20_000,
    );
    expect(String(answer.content.body)).toContain(runsAnswer("runs.ask", { question }).caveat!);

    const hello = hs.sendText(roomId, alice, "hello there");
    const offer = await hs.waitForEvent(
      roomId,
      (e) => e.sender === bot && inReplyTo(e) === hello.event_id,
      20_000,
    );
    hs.react(roomId, alice, offer.event_id, KEYCAPS[2]);
    const listed = await hs.waitForEvent(
      roomId,
      (e) => e.sender === bot && inReplyTo(e) === hello.event_id && e.event_id !== offer.event_id,
      20_000,
    );
    expect(String(listed.content.body)).toContain(runsAnswer("runs.list").answer);
    expect(callsIn(callLog).map((line) => line.split("\t")[0])).toEqual([
      "runs.ask",
      "runs.ask",
      "runs.list",
    ]);

    expect(await roomgate.stop()).toBe(0);
    expect(roomgate.output).not.toContain(token);
  });
});
