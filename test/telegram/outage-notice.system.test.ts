import { expect, it } from "vitest";
import { UNQUEUED_NOTICE } from "../../src/core/unqueued.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { demoNamespaces } from "../support/spine.js";
import { telegramRefusalWorld } from "../support/telegram-refusal-world.js";
import { waitFor } from "../support/wait.js";

/**
 * Redis refusing writes (MISCONF: a snapshot it cannot write) for longer than a few
 * seconds: the poller keeps the updates unconfirmed and retries them, and each person
 * whose message waits is told once — not once per retry nor per message — then
 * answered when Redis takes writes again.
 */
const ALICE = { id: 901, first_name: "Alice" };
const BOB = { id: 902, first_name: "Bob" };
const world = telegramRefusalWorld("rg-outage");

it("tells each person whose message cannot be queued once, and answers every message once Redis is back", async () => {
  const { server, standin, bot, texts, notices } = world;
  const demo = demoNamespaces({}, ["feed"]);
  const roomgate = (world.roomgate = RoomgateProcess.start(
    {
      redis: { url: server.url, prefix: "outage" },
      namespaces: demo.config.namespaces,
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: "${TELEGRAM_FEED_TOKEN}", namespace: "feed", users: [ALICE.id, BOB.id] }],
      },
    },
    { TELEGRAM_FEED_TOKEN: bot.token },
  ));
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");

  await world.refuseWrites();
  for (const person of [ALICE, BOB]) {
    standin.userSends(bot.token, { from: person, text: "/status" });
    standin.userSends(bot.token, { from: person, text: "/status" });
  }
  await waitFor(() => notices(ALICE.id).length > 0 && notices(BOB.id).length > 0, 40_000, "both told");
  // Still refused: the poller retries every second, and nobody is told again.
  await waitFor(
    () => (roomgate.output.match(/could not enqueue an update; retrying/g) ?? []).length >= 8,
    20_000,
    "retries after the notices",
  );
  expect(roomgate.output).toContain("MISCONF");
  await world.acceptWrites();

  await waitFor(() => texts(ALICE.id).length === 3 && texts(BOB.id).length === 3, 30_000, "the answers");
  // The answers keep a second from the notice, as from each other (Telegram's limit in a chat).
  expect(standin.sendGaps(1000)).toEqual([]);
  for (const person of [ALICE, BOB]) {
    expect(notices(person.id)).toHaveLength(1);
    expect(texts(person.id).filter((t) => t !== UNQUEUED_NOTICE)).toHaveLength(2);
  }
}, 90_000);
