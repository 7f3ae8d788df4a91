import { beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { StandinGroup, teamNamespace } from "../support/team.js";
import type { StandinUser, StoredMessage } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";
import { telegramWorld } from "../support/telegram-world.js";

// Bot API 10 in roomgate (issue 26): Stop on a call's progress draft stops the call at
// its MCP server; what is asked of one member of a group goes to that member alone.

const ALICE: StandinUser = { id: 2601, first_name: "Alice" };
const BOB: StandinUser = { id: 2602, first_name: "Bob" };
const GROUP = { id: -1002601, type: "supergroup" as const, title: "Team" };
const DM = { id: ALICE.id, type: "private" as const, first_name: "Alice" };

const team = teamNamespace();
const world = telegramWorld({ username: "api10_bot", topics: true });
const texts = (messages: StoredMessage[]) => messages.map((m) => m.text ?? "");
const buttons = (m: StoredMessage) => m.reply_markup?.inline_keyboard.flat().map((b) => b.text) ?? [];

beforeAll(async () => {
  await world.start(
    ConfigSchema.parse({
      namespaces: { h: team.config },
      telegram: {
        apiRoot: world.standin.url,
        limits: { groupPerMinute: 600, chatPerSecond: 30 },
        bots: [
          {
            token: world.bot.token,
            namespace: "h",
            users: [ALICE.id],
            groups: [{ chat: GROUP.id, respond: "all", users: [ALICE.id, BOB.id] }],
          },
        ],
      },
    }),
  );
}, 60_000);

describe("Bot API 10: Stop, and prompts for one member", () => {
  it("Stop on the progress draft of a slow call cancels it at its server; the turn ends with one line", async () => {
    const dm = new StandinGroup(world.standin, world.bot, DM);
    await dm.say(ALICE, "/tools");
    world.standin.userSends(world.bot.token, { from: ALICE, text: "/call h.slow seconds=60" });
    const draft = await waitFor(
      () => world.standin.drafts(world.bot.token, ALICE.id).find((d) => d.canStop),
      20_000,
      "a progress draft with a Stop button",
    );
    world.standin.userStops(world.bot.token, ALICE.id, draft.draftId);
    await waitFor(() => texts(dm.messages()).includes("Stopped."), 20_000, "the turn to end");
    await waitFor(
      () => team.calls().some((l) => l.startsWith("cancelled:h.slow\t")),
      10_000,
      "the server to be told of the cancellation",
    );
    const stoppedAt = draft.stoppedAt!;
    expect(texts(dm.messages()).filter((t) => t.includes("SLOW DONE"))).toEqual([]);
    expect(
      world.standin
        .drafts(world.bot.token, ALICE.id)
        .filter((d) => d.draftId === draft.draftId && d.at > stoppedAt),
    ).toEqual([]);
    // The Stop was taken by the call: nothing runs any more.
    expect(await dm.say(ALICE, "/cancel")).toBe("Nothing is running here to cancel.");
  });

  it("a member's approval in a group is seen by that member only; the room sees that it waits", async () => {
    const group = new StandinGroup(world.standin, world.bot, GROUP);
    await group.say(ALICE, "/tools");
    world.standin.addMember(world.bot.token, GROUP, BOB);
    const before = group.messages().length;
    const bobsBefore = world.standin.visibleTo(world.bot.token, GROUP.id, BOB.id).length;
    world.standin.userSends(world.bot.token, { from: ALICE, chat: GROUP, text: "/call h.wipe target=prod" });
    const ask = await waitFor(
      () =>
        world.standin
          .visibleTo(world.bot.token, GROUP.id, ALICE.id)
          .find((m) => m.sent?.receiver === ALICE.id && buttons(m).some((b) => b.endsWith("Approve"))),
      20_000,
      "the approval, for Alice",
    );
    expect(ask.text).toContain("h.wipe");
    await waitFor(
      () => texts(group.messages().slice(before)).includes("Waiting for an approval from Alice."),
      20_000,
      "the room's line",
    );
    const seenByBob = texts(world.standin.visibleTo(world.bot.token, GROUP.id, BOB.id).slice(bobsBefore));
    const seenByRoom = texts(group.messages().slice(before));
    expect(seenByBob).toEqual(["Waiting for an approval from Alice."]);
    for (const seen of [seenByBob, seenByRoom]) {
      expect(seen.join("\n")).not.toContain("h.wipe");
      expect(seen.join("\n")).not.toContain("prod");
    }
    expect(() =>
      world.standin.userPresses(world.bot.token, {
        from: BOB,
        chatId: GROUP.id,
        messageId: 0,
        ephemeralId: ask.ephemeral_message_id as number,
      }),
    ).toThrow(/cannot see/);
    const approve = ask.reply_markup!.inline_keyboard.flat().find((b) => b.text.endsWith("Approve"))!;
    world.standin.userPresses(world.bot.token, {
      from: ALICE,
      chatId: GROUP.id,
      messageId: 0,
      ephemeralId: ask.ephemeral_message_id as number,
      data: approve.callback_data!,
    });
    await waitFor(
      () => texts(group.messages()).some((t) => t.includes(`WIPED prod as tg:${ALICE.id}`)),
      20_000,
      "the call",
    );
    // The approval's buttons, Alice's alone, now show what she chose.
    await waitFor(
      () =>
        world.standin
          .visibleTo(world.bot.token, GROUP.id, ALICE.id)
          .some((m) => m.ephemeral_message_id === ask.ephemeral_message_id && buttons(m)[0] === "✅ Approve"),
      20_000,
      "the approval marked",
    );
  });

  it("a member's pending argument is asked of them alone; their next message fills it", async () => {
    const group = new StandinGroup(world.standin, world.bot, GROUP);
    const before = group.messages().length;
    world.standin.userSends(world.bot.token, { from: ALICE, chat: GROUP, text: "/call h.transfer" });
    await waitFor(
      () =>
        texts(world.standin.visibleTo(world.bot.token, GROUP.id, ALICE.id)).some((t) =>
          t.startsWith("To run h.transfer I need to"),
        ),
      20_000,
      "the question, for Alice",
    );
    expect(texts(group.messages().slice(before))).toEqual([]);
    expect(await group.say(ALICE, "acct-7")).toContain(`SENT to acct-7 as tg:${ALICE.id}`);
  });
});
