import { beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { StandinGroup, teamNamespace } from "../support/team.js";
import type { StandinUser } from "../support/telegram-api-standin.js";
import { telegramWorld } from "../support/telegram-world.js";
import { waitFor } from "../support/wait.js";

// Who counts and who may act in a group (issue 25): the requester never counts towards
// their own call's approvals; options of a proactive post are the room's users' only;
// /mute and /schedule remove follow the room's roles.

const ALICE: StandinUser = { id: 2501, first_name: "Alice" };
const BOB: StandinUser = { id: 2502, first_name: "Bob" };
const CAROL: StandinUser = { id: 2503, first_name: "Carol" };
const DAVE: StandinUser = { id: 2504, first_name: "Dave" };
const QUORUM = { id: -1002501, type: "supergroup" as const, title: "Quorum" };
const SOLO = { id: -1002502, type: "supergroup" as const, title: "Solo" };
const POSTS = { id: -1002503, type: "supergroup" as const, title: "Posts" };

const team = teamNamespace();
const world = telegramWorld({ username: "room_roles_bot" });
const chat = (c: typeof QUORUM) => new StandinGroup(world.standin, world.bot, c);
const calls = (tool: string) => team.calls().filter((l) => l.startsWith(`${tool}\t`));
const asked = (question: string) =>
  calls("h.ask").filter(
    (l) => (JSON.parse(l.split("\t")[1]!) as { question?: string }).question === question,
  );

/** `from` says `text` in a group where scheduled posts may also arrive: resolves with the first other answer. */
async function answer(room: StandinGroup, from: StandinUser, text: string): Promise<string> {
  const before = room.messages().length;
  world.standin.userSends(world.bot.token, { from, chat: room.chat, text });
  const reply = await waitFor(
    () =>
      room
        .messages()
        .slice(before)
        .find((m) => !m.text?.startsWith("⏰")),
    30_000,
    `an answer to "${text}"`,
  );
  return reply.text ?? "";
}

beforeAll(async () => {
  const config = ConfigSchema.parse({
    namespaces: { h: team.config },
    proactive: { minEverySeconds: 1 },
    telegram: {
      apiRoot: world.standin.url,
      limits: { groupPerMinute: 600, chatPerSecond: 30 },
      bots: [
        {
          token: world.bot.token,
          namespace: "h",
          groups: [
            {
              chat: QUORUM.id,
              respond: "all",
              users: [ALICE.id, BOB.id, CAROL.id],
              approvers: [ALICE.id, BOB.id, CAROL.id],
              approvals: { by: "approvers", count: 2 },
            },
            {
              chat: SOLO.id,
              respond: "all",
              users: [ALICE.id, BOB.id],
              approvers: [ALICE.id],
              approvals: { by: "approvers", count: 1 },
            },
            // Dave may press approvals here, but is not one of the room's users.
            {
              chat: POSTS.id,
              respond: "all",
              users: [ALICE.id, BOB.id, CAROL.id],
              approvers: [CAROL.id, DAVE.id],
            },
          ],
        },
      ],
    },
  });
  await world.start(config);
  for (const c of [QUORUM, SOLO]) await chat(c).say(ALICE, "/tools");
  await chat(SOLO).say(BOB, "/tools");
}, 60_000);

describe("roles in a group, on the Bot API stand-in", () => {
  it("the requester's own approval never counts: two approvers other than them run it", async () => {
    const room = chat(QUORUM);
    expect(await room.say(ALICE, "/call h.wipe target=quorum")).toContain(
      "2 of this room's approvers must approve it",
    );
    const own =
      "You asked for this call, so your own approval does not count: another of this room's approvers must approve it.";
    expect(await room.press(ALICE, "Approve")).toBe(own);
    expect(await room.sayAndSee(ALICE, "y")).toBe(own);
    expect(await room.press(BOB, "Approve")).toBe(
      "Approved by Bob (1 of 2); h.wipe waits for one more approval.",
    );
    expect(calls("h.wipe")).toEqual([]);
    await room.press(CAROL, "Approve");
    await waitFor(
      () => room.messages().some((m) => m.text?.includes(`WIPED quorum as tg:${ALICE.id}`)),
      30_000,
      "the call",
    );
    expect(calls("h.wipe")).toHaveLength(1);
  });

  it("count 1 with the requester as the only approver: nobody can approve it, and the room is told", async () => {
    const room = chat(SOLO);
    const refused = await room.say(ALICE, "/call h.wipe target=solo");
    expect(refused).toContain(
      "h.wipe needs an approval from this room's approvers other than the person who asked, and there is none, so nobody can approve it here.",
    );
    expect(room.messages().some((m) => m.reply_markup)).toBe(false);
    // Nothing is held: her "y" is a question for the router like any other.
    expect(await room.say(ALICE, "y")).toContain("pong: y");
    // Bob's call is Alice's to approve.
    expect(await room.say(BOB, "/call h.wipe target=bob")).toContain("One of this room's approvers");
    await room.press(ALICE, "Approve");
    await waitFor(
      () => room.messages().some((m) => m.text?.includes(`WIPED bob as tg:${BOB.id}`)),
      30_000,
      "Bob's call",
    );
    expect(calls("h.wipe").filter((l) => l.includes("solo"))).toEqual([]);
  });

  it("a scheduled post's options are the room's users' only; /schedule remove and /mute follow the roles", async () => {
    const room = chat(POSTS);
    expect(await answer(room, BOB, "/schedule add every 2s colour?")).toMatch(
      /^Scheduled #1: every 2s — colour\?/,
    );
    await waitFor(
      () => room.messages().some((m) => m.text?.startsWith("⏰ Scheduled ask") && m.reply_markup),
      30_000,
      "a scheduled post with options",
    );
    expect(await answer(room, ALICE, "/schedule remove 1")).toBe(
      "Schedule #1 can be removed only by whoever added it or by this room's approvers. Nothing was removed.",
    );
    expect(await answer(room, BOB, "/schedule remove 1")).toMatch(/^Removed schedule #1 /);

    // Dave may press approvals here, not a post's options.
    expect(await room.press(DAVE, "red")).toBe("Only this room's users may choose here.");
    expect(await room.press(ALICE, "green")).toBe("Chosen: green");
    await waitFor(
      () => room.messages().some((m) => m.text?.includes("pong: green")),
      30_000,
      "Alice's choice answered",
    );
    expect(asked("red")).toEqual([]);

    expect(await answer(room, ALICE, "/mute 30d")).toBe("Only this room's approvers may change /mute here.");
    expect(await answer(room, ALICE, "/mute")).toMatch(/^This room is not muted/);
    expect(await answer(room, CAROL, "/mute 1h")).toMatch(/^Muted until /);
    expect(await answer(room, ALICE, "/mute off")).toBe("Only this room's approvers may change /mute here.");
    expect(await answer(room, CAROL, "/mute off")).toMatch(/^Mute ended/);

    expect(await answer(room, ALICE, "/schedule add every 1h anything new?")).toMatch(/^Scheduled #1/);
    expect(await answer(room, CAROL, "/schedule remove 1")).toMatch(/^Removed schedule #1 /);
  }, 90_000);
});
