import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { telegramRoom } from "../../src/core/room.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { demoNamespaces } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 1601, first_name: "Alice" };
const MALLORY = { id: 1666, first_name: "Mallory" };
const UNBOUND = { id: -1001666, type: "supergroup" as const, title: "Nobody bound this" };

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let roomgate: RoomgateProcess;
let monitor: Redis;
/** Every Redis command roomgate sent under this test's prefix, as its words. */
const commands: string[][] = [];

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot({ username: "cost_bot" });
  db = await testRedis();
  monitor = await db.redis.monitor();
  // Lines of MONITOR still in the socket when it is closed reach ioredis after it left
  // monitoring, which it reports as an error event ("Command queue state error"): not the test's.
  monitor.on("error", () => undefined);
  monitor.on("monitor", (_time: string, args: string[]) => {
    if (args.some((a) => a.startsWith(`${db.prefix}:`))) commands.push(args);
  });
  const demo = demoNamespaces({}, ["feed"]);
  roomgate = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      namespaces: demo.config.namespaces,
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: "${TELEGRAM_FEED_TOKEN}", namespace: "feed", users: [ALICE.id] }],
      },
    },
    { TELEGRAM_FEED_TOKEN: bot.token, REDIS_URL: db.url, LOG_LEVEL: "info" },
  );
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
});

afterAll(async () => {
  await roomgate.stop();
  monitor.disconnect();
  await db.cleanup();
  await standin.close();
});

/** Lines of roomgate's log that mention `what`. */
const logLines = (what: string) => roomgate.output.split("\n").filter((l) => l.includes(what));

/**
 * Waits until roomgate has acted on every update: the poll past them confirms them, and
 * it asks for more only once a batch is handled (its refusals sent, its lines logged, its
 * Redis commands run). A command of the test's own, seen on the monitor after them, is
 * the barrier for the monitor's stream.
 */
async function settled(): Promise<void> {
  await waitFor(() => standin.pendingUpdates(bot.token) === 0, 30_000, "the updates taken");
  const marker = `${db.prefix}:settled:${commands.length}`;
  await db.redis.exists(marker);
  await waitFor(() => commands.some((c) => c.includes(marker)), 30_000, "the monitor caught up");
}

describe("what a stranger costs (real roomgate start, Bot API stand-in)", () => {
  it("#6 200 stranger DMs cost one refusal, one log line and one Redis write", async () => {
    for (let i = 0; i < 200; i++) standin.userSends(bot.token, { from: MALLORY, text: `let me in ${i}` });
    await settled();
    expect(standin.botMessages(bot.token, MALLORY.id)).toHaveLength(1);
    expect(logLines(String(MALLORY.id))).toHaveLength(1);
    const room = telegramRoom(bot.id, MALLORY.id);
    const touching = commands.filter((c) =>
      c.some((a) => a.includes(room) || a.includes(`tg:${MALLORY.id}`)),
    );
    const writes = touching.filter((c) => !["pttl", "ttl", "exists", "get"].includes(c[0]!.toLowerCase()));
    expect(writes.map((c) => c[0]!.toLowerCase())).toEqual(["set"]);
    expect(writes[0]![1]).toBe(db.keys.refused(room, `tg:${MALLORY.id}`));
  });

  it("#7 an unbound group costs one leave, one notice and one warning an hour, however often it is re-added", async () => {
    const membership = (status: "member" | "left") => ({
      my_chat_member: {
        chat: UNBOUND,
        from: { id: MALLORY.id, is_bot: false, first_name: "Mallory" },
        date: Math.floor(Date.now() / 1000),
        old_chat_member: { status: "left", user: { id: bot.id, is_bot: true, first_name: "bot" } },
        new_chat_member: { status, user: { id: bot.id, is_bot: true, first_name: "bot" } },
      },
    });
    standin.pushUpdate(bot.token, membership("member"));
    for (let i = 0; i < 30; i++) {
      standin.userSends(bot.token, { from: MALLORY, chat: UNBOUND, text: `/start@cost_bot ${i}` });
      if (i % 10 === 0) standin.pushUpdate(bot.token, membership("member"));
    }
    await settled();
    expect(standin.callsTo("leaveChat", bot.id)).toHaveLength(1);
    const notices = standin
      .callsTo("sendMessage", bot.id)
      .filter((c) => Number(c.params.chat_id) === UNBOUND.id);
    expect(notices).toHaveLength(1);
    expect(logLines("no binding names")).toHaveLength(1);
  });

  it("still answers the allowed user", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "/help" });
    await waitFor(() => standin.botMessages(bot.token, ALICE.id).length === 1, 20_000, "the help");
  });
});
