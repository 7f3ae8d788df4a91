import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signHook } from "../../src/proactive/hook-signature.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { runsAnswer } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { demoNamespaces } from "../support/spine.js";
import { waitFor } from "../support/wait.js";

// A CI failure posted into the Matrix operator room as the runs agent's answer, caveat
// and all: a notice of its own (no reply relation, nobody mentioned), marked as a webhook.

const SECRET = "ops-hook-secret-abcdef";

describe("a signed webhook into a Matrix room", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let roomgate: RoomgateProcess;
  let bot: string;
  let roomId: string;

  beforeAll(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    const botUser = hs.registerUser("roomgate");
    bot = botUser.userId;
    const alice = hs.registerUser("alice").userId;
    roomId = hs.createRoom(alice);
    roomgate = RoomgateProcess.start(
      {
        redis: { url: redis.url, prefix: redis.prefix },
        namespaces: demoNamespaces({}, ["runs"]).config.namespaces,
        http: { host: "127.0.0.1", port: 0 },
        matrix: {
          homeserver: hs.url,
          accessToken: "${MATRIX_TOKEN}",
          rooms: [{ room: roomId, namespace: "runs", users: [alice] }],
        },
        hooks: [
          {
            name: "ci",
            room: `matrix:${roomId}`,
            secret: "${HOOK_SECRET}",
            ask: "which arm of my {{ body.what }} won?",
          },
        ],
      },
      { MATRIX_TOKEN: botUser.accessToken, HOOK_SECRET: SECRET, LOG_LEVEL: "info" },
    );
    await waitFor(() => roomgate.output.includes("matrix receiver syncing"), 20_000, "the sync");
    hs.invite(roomId, alice, bot);
    await waitFor(() => hs.membership(roomId, bot) === "join", 20_000, "the join");
  });
  afterAll(async () => {
    roomgate.kill();
    await hs.close();
    await redis.cleanup();
  });

  it("posts the router's answer with its caveat, as a notice that replies to nothing", async () => {
    const port = /"port":(\d+),"msg":"health and metrics listening"/.exec(roomgate.output)![1];
    const body = JSON.stringify({ what: "sweep" });
    const ts = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`http://127.0.0.1:${port}/hooks/ci`, {
      method: "POST",
      headers: { "x-roomgate-timestamp": ts, "x-roomgate-signature": signHook(SECRET, ts, body) },
      body,
    });
    expect(res.status).toBe(202);
    const posted = await hs.waitForEvent(
      roomId,
      (e) => e.sender === bot && e.type === "m.room.message",
      20_000,
    );
    const text = String(posted.content.body);
    expect(posted.content.msgtype).toBe("m.notice");
    expect(text).toMatch(/^🪝 Webhook "ci" \(/);
    expect(text).toContain(runsAnswer("runs.ask", { question: "which arm of my sweep won?" }).caveat!);
    expect(posted.content["m.relates_to"]).toBeUndefined();
    expect(posted.content["m.mentions"]).toEqual({ user_ids: [] });
  });
});
