import { beforeAll, describe, expect, it } from "vitest";
import { telegramRoom } from "../../src/core/room.js";
import { DEMO_SERVER } from "../support/spine.js";
import { telegramWorld } from "../support/telegram-world.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 8101, first_name: "Alice" };
const BOB = { id: 8102, first_name: "Bob" };

describe("Telegram intake with the flood check in the enqueue", () => {
  const world = telegramWorld();
  beforeAll(async () => {
    const base = world.config({
      namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
      bot: { users: [ALICE.id, BOB.id] },
    });
    await world.start({ ...base, limits: { ...base.limits, turnsPerMinute: 2 } });
  });

  const tooFast = (text: string | undefined) => text?.includes("more than 2 messages a minute") ?? false;

  it("answers a person's turns up to the rate; the excess gets one notice and no answer", async () => {
    for (let i = 0; i < 5; i++)
      world.standin.userSends(world.bot.token, { from: ALICE, text: `what should I read today? ${i}` });
    await waitFor(
      () => world.standin.botMessages(world.bot.token, ALICE.id).length >= 3,
      20_000,
      "two answers and a notice",
    );
    // Every update handled at the edge, then every queued turn answered: a wrongly
    // queued one would have been answered by now.
    await waitFor(() => world.standin.pendingUpdates(world.bot.token) === 0, undefined, "the updates taken");
    await waitFor(
      () => world.db.drained(telegramRoom(world.bot.id, ALICE.id)),
      undefined,
      "Alice's room drained",
    );
    const texts = world.standin.botMessages(world.bot.token, ALICE.id).map((m) => m.text);
    expect(texts.filter(tooFast)).toHaveLength(1);
    expect(texts.filter((t) => !tooFast(t))).toHaveLength(2);
    expect(world.standin.pendingUpdates(world.bot.token)).toBe(0);

    // Another person is not held to Alice's count.
    world.standin.userSends(world.bot.token, { from: BOB, text: "what should I read today?" });
    await waitFor(
      () => world.standin.botMessages(world.bot.token, BOB.id).length === 1,
      20_000,
      "Bob's answer",
    );
    expect(tooFast(world.standin.botMessages(world.bot.token, BOB.id)[0]!.text)).toBe(false);
  }, 60_000);
});
