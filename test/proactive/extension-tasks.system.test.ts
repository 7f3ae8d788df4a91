import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcp26Http, type Mcp26Http } from "../support/mcp-2026/harness.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

// A task of the 2026-07-28 Tasks extension, from a Telegram room of the stand-in: the
// SDK v2 test server over Streamable HTTP (a child process that outlives roomgate, and
// 2026-07-28 has no sessions) answers the call with a task; `roomgate start` shows its
// progress, dies with kill -9 mid-task, and the restarted one follows the same task
// to its result, delivered once. /cancel cancels a task at the server.

const ALICE = { id: 2611, first_name: "Alice" };

let standin: TelegramApiStandin;
let bot: StandinBot;
let db: TestRedis;
let server: Mcp26Http;
let roomgate: RoomgateProcess;
const started: RoomgateProcess[] = [];

function start(): RoomgateProcess {
  const p = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      namespaces: { mt: { url: server.url } },
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: "${TELEGRAM_MT_TOKEN}", namespace: "mt", users: [ALICE.id] }],
      },
      queue: { leaseSeconds: 2 },
    },
    { TELEGRAM_MT_TOKEN: bot.token, LOG_LEVEL: "info" },
  );
  started.push(p);
  return p;
}

const texts = () => standin.botMessages(bot.token, ALICE.id).map((m) => m.text ?? "");
/** What the bot showed as a call's status, in order: drafts, status messages and their edits. */
const shown = () =>
  ["sendMessage", "editMessageText", "sendMessageDraft"]
    .flatMap((method) => standin.callsTo(method, bot.id))
    .filter((c) => c.ok)
    .sort((a, b) => a.at - b.at)
    .map((c) => String((c.params as { text?: unknown }).text ?? ""));

async function say(text: string): Promise<void> {
  const before = texts().length;
  standin.userSends(bot.token, { from: ALICE, text });
  await waitFor(() => texts().length > before, 30_000, `an answer to "${text}"`);
}

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot({ username: "mt_tasks_bot" });
  db = await testRedis();
  server = await startMcp26Http("2026-07-28", 2500);
  roomgate = start();
  await waitFor(() => standin.isPolling(bot.token), 60_000, "the bot to poll");
  await say("/tools");
}, 120_000);

afterAll(async () => {
  for (const p of started) p.kill();
  await server?.stop();
  await db?.cleanup();
  await standin?.close();
});

describe("a 2026-07-28 task (the Tasks extension)", () => {
  it("shows its progress, survives a kill -9 of roomgate, and delivers the result once", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "/call mt.build" });
    await waitFor(
      () => shown().some((t) => /^⏳ mt\.build: working — \w+ \(\d\/3\)$/.test(t)),
      30_000,
      "the task's progress",
    );
    expect(server.events("task-created")).toHaveLength(1);
    roomgate.child.kill("SIGKILL");
    roomgate = start();
    await waitFor(
      () => texts().some((t) => t.includes("build of main ready: 42 files")),
      60_000,
      "the result",
    );
    expect(shown().some((t) => /^⏳ mt\.build: resumed \(task [0-9a-f-]{36}\)$/.test(t))).toBe(true);
    // The restarted roomgate followed the same task: the server made one.
    expect(server.events("task-created")).toHaveLength(1);
    // Once: a later message is answered, and the result was not sent again before it.
    await say("/tools");
    expect(texts().filter((t) => t.includes("build of main ready"))).toHaveLength(1);
  }, 120_000);

  it("/cancel cancels the running task at the server", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "/call mt.build target=nightly" });
    await waitFor(() => server.events("task-created").length === 2, 30_000, "the second task");
    standin.userSends(bot.token, { from: ALICE, text: "/cancel" });
    await waitFor(() => texts().some((t) => t.startsWith("Cancelled: mt.build")), 30_000, "the cancel");
    const [, second] = server.events("task-created");
    expect(server.events("tasks/cancel").map((e) => e.taskId)).toEqual([second!.taskId]);
    await waitFor(
      () => server.events("task-status").some((e) => e.taskId === second!.taskId && e.status === "cancelled"),
      30_000,
      "the task cancelled at the server",
    );
  }, 60_000);
});
