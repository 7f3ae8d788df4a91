import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { runsTools } from "../../src/demo/runs.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import { MatrixHomeserverStandin, type StandinEvent } from "../support/matrix-homeserver-standin.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, DEMO_SERVER } from "../support/spine.js";

const inReplyTo = (e: StandinEvent): string | undefined =>
  (e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.["m.in_reply_to"]
    ?.event_id;

function runsAnswer(tool: string, args: Record<string, unknown> = {}) {
  const found = runsTools.find((candidate) => candidate.name === tool);
  if (found?.kind !== "answer") throw new Error(`${tool} is not an Answer tool`);
  return found.run(args);
}

describe("`roomgate start -c config.yaml` with one Matrix room bound to runs", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let child: ChildProcess;
  let stderr = "";
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
    const dir = mkdtempSync(join(tmpdir(), "roomgate-cli-matrix-"));
    callLog = join(dir, "calls.log");
    const configFile = join(dir, "config.yaml");
    writeFileSync(
      configFile,
      stringify({
        redis: { url: redis.url, prefix: redis.prefix },
        namespaces: {
          runs: {
            command: [process.execPath, DEMO_SERVER],
            env: { ATTEST_TOOLS: "runs", DEMO_CALL_LOG: callLog },
          },
        },
        matrix: {
          homeserver: hs.url,
          accessToken: "${MATRIX_TOKEN}",
          rooms: [{ room: roomId, namespace: "runs", users: [alice] }],
        },
      }),
    );
    const env: NodeJS.ProcessEnv = { ...process.env, MATRIX_TOKEN: token, LOG_LEVEL: "debug" };
    delete env.REDIS_URL;
    child = spawn(process.execPath, ["bin/roomgate", "start", "-c", configFile], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  });
  afterAll(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await hs.close();
    await redis.cleanup();
  });

  it("joins on invite, answers, asks back, takes a keycap, and stops on SIGTERM without leaking the token", async () => {
    await expect.poll(() => stderr, { timeout: 20_000 }).toContain("matrix receiver syncing");
    hs.invite(roomId, alice, bot);
    await expect.poll(() => hs.membership(roomId, bot), { timeout: 20_000 }).toBe("join");

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

    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stderr).not.toContain(token);
  });
});
