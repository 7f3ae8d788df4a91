import { afterEach, beforeAll, afterAll, beforeEach, describe, expect, it } from "vitest";
import { RESEND_NOTE } from "../../src/render/telegram.js";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 901, first_name: "Alice" };
const LEASE_SECONDS = 2;

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
const processes: RoomgateProcess[] = [];

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot();
});
afterEach(async () => {
  for (const p of processes.splice(0)) p.kill();
  await db.cleanup();
});

function run(command: "start" | "worker", env: Record<string, string> = {}, httpPort?: number) {
  const demo = demoNamespaces(env, ["feed"]);
  const p = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      namespaces: demo.config.namespaces,
      queue: { leaseSeconds: LEASE_SECONDS },
      ...(httpPort === undefined ? {} : { http: { host: "127.0.0.1", port: httpPort } }),
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: "${TELEGRAM_FEED_TOKEN}", namespace: "feed", users: [ALICE.id] }],
      },
    },
    { TELEGRAM_FEED_TOKEN: bot.token, LOG_LEVEL: "info" },
    command,
  );
  processes.push(p);
  return { process: p, callLog: demo.callLog };
}

const answers = () => standin.botMessages(bot.token, ALICE.id);

/** Who holds Alice's room's lease and until when (a score on Redis's clock), read together. */
async function holder(): Promise<{ token: string | null; until: number }> {
  const room = `telegram:${bot.id}:${ALICE.id}`;
  const running = db.schedulerKeys.laneShard("telegram", db.schedulerKeys.shardOf(room)).running;
  const [[, token], [, until]] = (await db.redis
    .multi()
    .get(db.schedulerKeys.lease(room))
    .zscore(running, room)
    .exec()) as [[null, string | null], [null, string | null]];
  return { token, until: Number(until) };
}

/** The time of a process's first log line with this message. */
function logTime(output: string, msg: string): number | undefined {
  for (const line of output.split("\n")) {
    if (!line.startsWith("{")) continue;
    const entry = JSON.parse(line) as { msg?: string; time?: number };
    if (entry.msg === msg) return entry.time;
  }
  return undefined;
}
const asks = (log: string) => callsIn(log).filter((c) => c.startsWith("feed.ask"));

describe("a worker killed with SIGKILL", () => {
  it("between marking a part sending and recording it sent: the part is sent again once, within lease + 2 s", async () => {
    const first = run("start");
    await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
    // Telegram takes the message but its answer never reaches the worker before it dies.
    standin.delayAnswer("sendMessage", 30_000);
    standin.userSends(bot.token, { from: ALICE, text: "what should I read today?" });
    await waitFor(() => answers().length === 1, 20_000, "the first copy to reach the chat");
    first.process.child.kill("SIGKILL");
    const deadUntil = (await holder()).until;
    // A new `start`: workers, and a receiver that may see the question again (de-duplicated).
    const port = await freePort();
    const second = run("start", {}, port);
    await waitFor(() => answers().length === 2, 20_000, "the part to be sent again");
    const [a, b] = answers();
    // The person is told: the copy is the same answer, whole, with one note below it.
    expect(b!.text).toBe(`${a!.text}\n\n${RESEND_NOTE}`);
    expect(a!.text).not.toContain(RESEND_NOTE);
    // The outcome was committed before the send: the namespace was asked once, not again.
    expect(asks(first.callLog)).toHaveLength(1);
    expect(asks(second.callLog)).toHaveLength(0);
    // The operator can tell this repeat from a bug: the resend is logged with the turn, room,
    // part and the killed worker that made the earlier attempt, and counted.
    const resent = second.process.output
      .split("\n")
      .filter((l) => l.includes("an earlier attempt of this part has no recorded answer"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(resent).toHaveLength(1);
    // Within 2 s of the later of the dead lease's end (Redis's clock) and the new process
    // being up (its own log): the stall is the lease, not how busy the box was starting it.
    const resentAt = resent[0]!.time as number;
    const upAt = await waitFor(() => logTime(second.process.output, "roomgate started"), 20_000, "the start");
    expect(resentAt).toBeGreaterThanOrEqual(deadUntil);
    expect(resentAt - Math.max(deadUntil, upAt)).toBeLessThan(2000);
    expect(resent[0]).toMatchObject({
      turn: expect.stringMatching(new RegExp(`^tg:${bot.id}:\\d+$`)),
      room: `telegram:${bot.id}:${ALICE.id}`,
      part: expect.any(String),
      earlierAttemptAt: expect.any(Number),
      earlierAttemptBy: expect.stringContaining(`/${first.process.child.pid}/`),
    });
    // The new process serves /metrics once its receivers are up, which may be after its worker resent the part.
    const metrics = await waitFor(
      () =>
        fetch(`http://127.0.0.1:${port}/metrics`).then(
          (r) => r.text(),
          () => false as const,
        ),
      20_000,
      "the new process's /metrics",
    );
    expect(metrics).toMatch(/^roomgate_resent_unknown_parts_total\{platform="telegram"\} 1$/m);
    expect(metrics).toMatch(/^roomgate_resent_noted_parts_total\{platform="telegram"\} 1$/m);
    // The turn is finished: the room answers the next question once, and no third copy came
    // before it (the room's turns are served in order, so a repeat would come first).
    standin.userSends(bot.token, { from: ALICE, text: "/status" });
    await waitFor(() => answers().length >= 3, 20_000, "the next answer");
    expect(answers()).toHaveLength(3);
    expect(answers()[2]!.text).not.toBe(a!.text);
    // The turn's record goes once its last part is recorded sent, just after the answer arrives.
    await waitFor(
      async () => (await db.redis.exists(db.schedulerKeys.turn(`telegram:${bot.id}:${ALICE.id}`))) === 0,
      20_000,
      "the finished turn's record to go",
    );
  }, 60_000);

  it("while the namespace is answering: another worker takes the room over within lease + 2 s and answers once", async () => {
    const first = run("start", { DEMO_SLOW_MS: "3000" });
    await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
    const second = run("worker");
    await waitFor(() => second.process.output.includes("roomgate worker started"), 20_000, "the worker");
    standin.userSends(bot.token, { from: ALICE, text: "what should I read today?" });
    await waitFor(() => asks(first.callLog).length === 1, 20_000, "the first worker to ask");
    const dead = await holder();
    expect(dead.token).not.toBeNull();
    first.process.child.kill("SIGKILL");
    // Taken over: the room's lease carries another worker's token. Watched on Redis's clock:
    // the dead holder's last lease end, and the new holder's first (its claim plus a lease).
    let deadUntil = dead.until;
    const taken = await waitFor(
      async () => {
        const now = await holder();
        if (now.token === dead.token) deadUntil = now.until;
        return now.token !== null && now.token !== dead.token && now;
      },
      20_000,
      "the takeover",
    );
    // A later renewal only moves `until` on, so this is the latest the claim can have been.
    const claimedBy = taken.until - LEASE_SECONDS * 1000;
    expect(claimedBy).toBeGreaterThanOrEqual(deadUntil);
    expect(claimedBy - deadUntil).toBeLessThan(2000);
    await waitFor(() => answers().length === 1, 20_000, "the answer from the other worker");
    // Nothing left that could send it again: no event, lease or turn record of the room.
    await waitFor(() => db.drained(`telegram:${bot.id}:${ALICE.id}`), 20_000, "the room drained");
    expect(answers()).toHaveLength(1);
    expect(answers()[0]!.text).toContain("Today's digest");
  }, 60_000);
});
