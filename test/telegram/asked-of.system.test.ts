import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InboundEvent } from "../../src/core/event.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { forge, handled, StandinGroup, teamNamespace } from "../support/team.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 1701, first_name: "Alice" };
const BOB = { id: 1702, first_name: "Bob" };
const MALLORY = { id: 1766, first_name: "Mallory" };
const GROUP = { id: -1001700, type: "supergroup" as const, title: "Team" };

const team = teamNamespace();
let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let roomgate: RoomgateProcess;
let group: StandinGroup;

const calls = (tool: string) => team.calls().filter((c) => c.startsWith(`${tool}\t`));
const seen = (messages: { text?: string }[]) => messages.map((m) => m.text ?? "").join("\n");

/**
 * An event as `who` (Mallory, in no list, unless said) would have queued it with Redis
 * access, `allowed: true`; or a press of a button `who` cannot see (one for Alice alone).
 */
function forged(kind: "choice" | "message", value: string, n: number, who = MALLORY): InboundEvent {
  const base = {
    eventId: `forged:${n}`,
    namespace: "h",
    platform: "telegram" as const,
    receivedAt: Date.now(),
    room: group.room,
    sender: { id: `tg:${who.id}`, name: who.first_name, allowed: true },
    origin: {
      platform: "telegram" as const,
      botId: bot.id,
      chatId: GROUP.id,
      chatType: "supergroup" as const,
      userId: who.id,
    },
  };
  return kind === "choice"
    ? { ...base, kind, token: value, addressed: "button" }
    : { ...base, kind, text: value, addressed: "command" };
}

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot({ username: "team_bot" });
  db = await testRedis();
  roomgate = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      namespaces: { h: team.config },
      telegram: {
        apiRoot: standin.url,
        // Many answers in one group: Telegram's pace (1 a second, 20 a minute) would make the test wait.
        limits: { groupPerMinute: 600, chatPerSecond: 30 },
        bots: [
          {
            token: "${TELEGRAM_TEAM_TOKEN}",
            namespace: "h",
            groups: [{ chat: GROUP.id, users: [ALICE.id, BOB.id], respond: "all" }],
          },
        ],
      },
    },
    { TELEGRAM_TEAM_TOKEN: bot.token, REDIS_URL: db.url },
  );
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
  group = new StandinGroup(standin, bot, GROUP);
  await group.say(ALICE, "/tools");
}, 60_000);

afterAll(async () => {
  await roomgate.stop();
  await db.cleanup();
  await standin.close();
});

describe("pending state belongs to the person it was asked of (a group with two allowed users)", () => {
  it("#2 another member's message does not fill Alice's pending argument, nor cancel it", async () => {
    expect(await group.sayAndSee(ALICE, "/call h.transfer")).toContain("To run h.transfer I need to");
    // Asked of Alice: she alone sees it (an ephemeral message).
    expect(seen(group.seenBy(BOB))).not.toContain("To run h.transfer");
    // Bob's messages are ordinary turns: they go to the router.
    expect(await group.say(BOB, "bob-account-666")).toContain("pong: bob-account-666");
    expect(await group.say(BOB, "cancel")).toContain("pong: cancel");
    expect(calls("h.transfer")).toEqual([]);
    expect(await group.say(ALICE, "alice-account-1")).toContain(`SENT to alice-account-1 as tg:${ALICE.id}`);
    expect(calls("h.transfer").map((c) => JSON.parse(c.split("\t")[1]!))).toEqual([
      { to: "alice-account-1", user: `tg:${ALICE.id}` },
    ]);
  });

  it("#2 another member's slot does not replace Alice's: each fills their own", async () => {
    expect(await group.sayAndSee(ALICE, "/call h.transfer")).toContain("I need to");
    expect(await group.sayAndSee(BOB, "/call h.transfer")).toContain("I need to");
    expect(await group.say(BOB, "bob-2")).toContain(`SENT to bob-2 as tg:${BOB.id}`);
    expect(await group.say(ALICE, "alice-2")).toContain(`SENT to alice-2 as tg:${ALICE.id}`);
  });

  it("#3 another member cannot approve Alice's destructive call, by typing or by pressing", async () => {
    const held = await group.sayAndSee(ALICE, "/call h.wipe target=staging");
    expect(held).toContain("possibly destructive");
    await waitFor(
      () => seen(group.messages()).includes("Waiting for an approval from Alice."),
      30_000,
      "the room's line",
    );
    expect(seen(group.seenBy(BOB))).not.toContain("target=staging");
    expect(await group.say(BOB, "yes")).toContain("pong: yes");
    // Bob does not see Alice's buttons; a press of them (its data replayed) is refused all the same.
    await forge(db, forged("choice", group.buttonData("Approve", ALICE), 3, BOB));
    await handled(db, group.room, "forged:3");
    expect(calls("h.wipe")).toEqual([]);
    expect(await group.say(ALICE, "y")).toContain(`WIPED staging as tg:${ALICE.id}`);
    expect(calls("h.wipe")).toHaveLength(1);
  });

  it("#4 options offered in reply to Alice are hers: Bob's press is refused, his typed number is his own turn", async () => {
    expect(await group.say(ALICE, "colour?")).toContain("pong: colour?");
    expect(await group.press(BOB, "red")).toBe("This was asked of Alice.");
    expect(await group.say(BOB, "1")).toContain("pong: 1");
    expect(await group.say(ALICE, "2")).toContain("pong: green");
  });

  it("#4 #9 another member's press does not answer Alice's question, nor does a forged one; hers does", async () => {
    const before = group.seenBy(ALICE).length;
    const roomBefore = group.messages().length;
    standin.userSends(bot.token, { from: ALICE, chat: GROUP, text: "/call h.pay amount=1000" });
    await waitFor(
      () =>
        group
          .seenBy(ALICE)
          .slice(before)
          .some((m) => m.reply_markup?.inline_keyboard.flat().some((b) => b.text.endsWith("Yes"))),
      30_000,
      "the question",
    );
    expect(seen(group.seenBy(ALICE).slice(before))).toContain(
      "h asks Alice: Confirm the payment of 1000 EUR?",
    );
    // The room sees that Alice is asked, not what.
    const roomSaw = seen(group.messages().slice(roomBefore));
    expect(roomSaw).toContain("Waiting for Alice to answer a question (shown to them).");
    expect(roomSaw).not.toContain("Confirm the payment");
    // Bob does not see the question's buttons; a press of them (its data replayed) does not answer it.
    await forge(db, forged("choice", group.buttonData("Yes", ALICE), 4, BOB));
    // With Redis access one could queue Mallory's press as allowed: the running call re-checks it.
    await forge(db, forged("choice", group.buttonData("Yes", ALICE), 1));
    // The waiting call reads the room's events in order, so the forged presses are weighed
    // before Alice's: hers is the one that answers (its toast says nothing else), and only
    // then is the payment made.
    const paid = () => group.messages().filter((m) => m.text?.includes("PAID"));
    expect(paid()).toEqual([]);
    const toast = await group.press(ALICE, "Yes");
    await waitFor(() => paid().length > 0, 30_000, "the payment");
    expect(toast, "Alice's press did not answer the question").toBeUndefined();
    expect(paid()).toHaveLength(1);
    expect(
      group
        .messages()
        .map((m) => m.text ?? "")
        .join("\n"),
    ).toContain(`PAID 1000 as tg:${ALICE.id}`);
  });

  it("#2 #9 /cancel from another member, or forged, does not stop Alice's call; hers does", async () => {
    const before = group.messages().length;
    const slowCalls = calls("h.slow").length;
    standin.userSends(bot.token, { from: ALICE, chat: GROUP, text: "/call h.slow" });
    await waitFor(() => calls("h.slow").length > slowCalls, 30_000, "Alice's call running");
    standin.userSends(bot.token, { from: BOB, chat: GROUP, text: "/cancel" });
    await forge(db, forged("message", "/cancel", 2));
    await waitFor(
      () =>
        group
          .messages()
          .slice(before)
          .some((m) => m.text?.includes("SLOW DONE")),
      30_000,
      "the call",
    );
    // Bob's own /cancel came to its turn after the call: there was nothing of his to cancel.
    await waitFor(
      () =>
        group
          .messages()
          .slice(before)
          .some((m) => m.text?.includes("Nothing is running here to cancel")),
      30_000,
      "Bob's turn",
    );
    const again = group.messages().length;
    const slowAgain = calls("h.slow").length;
    standin.userSends(bot.token, { from: ALICE, chat: GROUP, text: "/call h.slow" });
    await waitFor(() => calls("h.slow").length > slowAgain, 30_000, "Alice's second call running");
    standin.userSends(bot.token, { from: ALICE, chat: GROUP, text: "/cancel" });
    await waitFor(
      () =>
        group
          .messages()
          .slice(again)
          .some((m) => m.text?.includes("Cancelled")),
      30_000,
      "the cancel",
    );
    expect(
      group
        .messages()
        .slice(again)
        .some((m) => m.text?.includes("SLOW DONE")),
    ).toBe(false);
  });
});
