import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NOTE_URI, startNotesServer, type NotesServer } from "../support/notes-server.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

// A real MCP server over Streamable HTTP with a subscribable resource and a task tool,
// and `roomgate start` talking to it from a Telegram room of the stand-in: updates are
// posted (throttled, unchanged ones not again), a task survives a kill -9 of roomgate,
// and /cancel cancels one.

const ALICE = { id: 1701, first_name: "Alice" };
const THROTTLE_S = 2;

let standin: TelegramApiStandin;
let bot: StandinBot;
let db: TestRedis;
let notes: NotesServer;
let roomgate: RoomgateProcess;
const started: RoomgateProcess[] = [];

function start(): RoomgateProcess {
  const p = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      namespaces: { notes: { url: notes.url } },
      telegram: {
        apiRoot: standin.url,
        bots: [
          {
            token: "${TELEGRAM_NOTES_TOKEN}",
            namespace: "notes",
            users: [ALICE.id],
            subscribe: [NOTE_URI],
            onUpdate: "show",
          },
        ],
      },
      queue: { leaseSeconds: 2 },
      proactive: { resourceThrottleSeconds: THROTTLE_S },
    },
    { TELEGRAM_NOTES_TOKEN: bot.token, LOG_LEVEL: "info" },
  );
  started.push(p);
  return p;
}

const texts = () => standin.botMessages(bot.token, ALICE.id).map((m) => m.text ?? "");
/** Every text the bot sent or edited a status message to, in order (a status line is edited in place). */
const shown = () =>
  [...standin.callsTo("sendMessage", bot.id), ...standin.callsTo("editMessageText", bot.id)]
    .filter((c) => c.ok)
    .sort((a, b) => a.at - b.at)
    .map((c) => String((c.params as { text?: unknown }).text ?? ""));
const updates = () => texts().filter((t) => t.startsWith("🔔 Resource updated: note://status"));

beforeAll(async () => {
  standin = await TelegramApiStandin.start({ perChatRate: true });
  bot = standin.addBot({ username: "notes_bot" });
  db = await testRedis();
  notes = await startNotesServer({ stageMs: 2500 });
  roomgate = start();
  await waitFor(() => standin.isPolling(bot.token) && notes.subscribers() === 1, 30_000, "the subscription");
});

afterAll(async () => {
  for (const p of started) p.kill();
  await notes.close();
  await db.cleanup();
  await standin.close();
});

describe("resource updates", () => {
  it("posts an update into the bound room, showing the resource as it reads now", async () => {
    await notes.setNote("deploy is green");
    await waitFor(() => updates().length === 1, 20_000, "the first update");
    expect(updates()[0]).toContain("deploy is green");
  });

  it("throttles a burst to one post per window, the last state shown, and skips an unchanged one", async () => {
    const before = updates().length;
    await new Promise((r) => setTimeout(r, THROTTLE_S * 1000));
    for (const text of ["red 1", "red 2", "red 3", "red 4"]) await notes.setNote(text);
    await waitFor(() => updates().at(-1)?.includes("red 4") === true, 20_000, "the burst's last state");
    await new Promise((r) => setTimeout(r, 2 * THROTTLE_S * 1000));
    const burst = updates().slice(before);
    expect(burst.length).toBeLessThanOrEqual(2);
    expect(burst.at(-1)).toContain("red 4");
    await notes.touch();
    await new Promise((r) => setTimeout(r, 2 * THROTTLE_S * 1000 + 1000));
    expect(updates().length).toBe(before + burst.length);
  });
});

describe("a long MCP task", () => {
  it("shows started and progress, survives a kill -9 of roomgate, and delivers the result once", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "write the report" });
    await waitFor(() => texts().some((t) => t.includes("A report takes a while")), 20_000, "the offer");
    const offer = standin.botMessages(bot.token, ALICE.id).find((m) => m.text?.includes("A report takes"))!;
    standin.userPresses(bot.token, { from: ALICE, chatId: ALICE.id, messageId: offer.message_id });
    await waitFor(() => shown().some((t) => /Notes report: started \(task /.test(t)), 20_000, "started");
    // Its status is shown in place (edited at most every 2 s), then roomgate dies mid-task.
    await waitFor(
      () => shown().some((t) => /Notes report: working — \w+ \(\d\/3\)/.test(t)),
      20_000,
      "progress",
    );
    expect((await notes.tasks())[0]!.status).toBe("working");
    roomgate.child.kill("SIGKILL");
    roomgate = start();
    await waitFor(
      () => texts().some((t) => t.startsWith("report done: write the report")),
      40_000,
      "the result",
    );
    const tasks = await notes.tasks();
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.status).toBe("completed");
    await new Promise((r) => setTimeout(r, 2000));
    expect(texts().filter((t) => t.startsWith("report done"))).toHaveLength(1);
    expect(shown().some((t) => /Notes report: resumed \(task /.test(t))).toBe(true);
  });

  it("/cancel cancels the running task on the server", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "another report please" });
    await waitFor(
      () => texts().filter((t) => t.includes("A report takes a while")).length === 2,
      20_000,
      "offer",
    );
    const offer = standin
      .botMessages(bot.token, ALICE.id)
      .filter((m) => m.text?.includes("A report takes"))
      .at(-1)!;
    standin.userPresses(bot.token, { from: ALICE, chatId: ALICE.id, messageId: offer.message_id });
    await waitFor(async () => (await notes.tasks()).length === 2, 20_000, "the second task");
    standin.userSends(bot.token, { from: ALICE, text: "/cancel" });
    await waitFor(() => texts().some((t) => t.startsWith("Cancelled: Notes report")), 20_000, "the cancel");
    expect((await notes.tasks())[1]!.status).toBe("cancelled");
  });
});
