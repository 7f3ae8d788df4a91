import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { UNQUEUED_NOTICE } from "../../src/core/unqueued.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { telegramRefusalWorld } from "../support/telegram-refusal-world.js";
import { waitFor } from "../support/wait.js";

/**
 * The told-once notice goes out while Redis refuses writes, so it cannot take a slot in
 * the send windows then; it must still count in them. Here the chat has an answer on its
 * way when Redis starts refusing (its namespace call held), and a later message that
 * cannot be queued earns the notice; Redis takes writes again right after the notice and
 * the held answer is ready at once. Telegram allows one message a second in a chat: the
 * answer has to come a second after the notice, not as soon as Redis is back. The
 * stand-in answers 429 to a second message in a chat within a second.
 */
const ALICE = { id: 911, first_name: "Alice" };
const world = telegramRefusalWorld("rg-outage-windows", { perChatRate: true });

it("counts the notice in the chat's send window: an answer ready when Redis is back comes a second after it", async () => {
  const { dir, server, standin, bot, texts, notices } = world;
  const hold = join(dir, "hold");
  const demo = demoNamespaces({ DEMO_HOLD_FILE: hold }, ["feed"]);
  world.roomgate = RoomgateProcess.start(
    {
      redis: { url: server.url, prefix: "windows" },
      // The held turn keeps its room through the outage.
      queue: { leaseSeconds: 60 },
      namespaces: demo.config.namespaces,
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: "${TELEGRAM_FEED_TOKEN}", namespace: "feed", users: [ALICE.id] }],
      },
    },
    { TELEGRAM_FEED_TOKEN: bot.token },
  );
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");

  writeFileSync(hold, "");
  standin.userSends(bot.token, { from: ALICE, text: "first question" });
  await waitFor(
    () => callsIn(demo.callLog).some((c) => c.startsWith("feed.ask") && c.includes("first question")),
    20_000,
    "the first question at its namespace",
  );
  await world.refuseWrites();
  standin.userSends(bot.token, { from: ALICE, text: "/status" });
  await waitFor(() => notices(ALICE.id).length > 0, 40_000, "Alice told");
  await world.acceptWrites();
  rmSync(hold);

  await waitFor(() => texts(ALICE.id).length === 3, 30_000, "both answers");
  expect(texts(ALICE.id)[0]).toBe(UNQUEUED_NOTICE);
  expect(notices(ALICE.id)).toHaveLength(1);
  expect(standin.sendGaps(1000)).toEqual([]);
}, 90_000);
