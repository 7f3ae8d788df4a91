import { describe, expect, it } from "vitest";
import { ConfigSchema, type Config } from "../../src/core/config.js";
import { StandinGroup, teamNamespace } from "../support/team.js";
import { telegramWorld } from "../support/telegram-world.js";
import { waitFor } from "../support/wait.js";

// A /cancel and an elicitation's answer reach a running call by a Redis signal, when
// another process received them: one process only receives and queues, the other only
// runs turns. The re-read that covers a lost signal is set far beyond the test, so
// only the signal can bring them in time.

const ALICE = { id: 2101, first_name: "Alice" };
const GROUP = { id: -1002100, type: "supergroup" as const, title: "Signals" };
const team = teamNamespace();
const world = telegramWorld({ username: "signals_bot" });

function config(): Config {
  return ConfigSchema.parse({
    namespaces: { h: team.config },
    queue: { recheckSeconds: 600 },
    telegram: {
      apiRoot: world.standin.url,
      limits: { groupPerMinute: 600, chatPerSecond: 30 },
      bots: [
        {
          token: world.bot.token,
          namespace: "h",
          groups: [{ chat: GROUP.id, users: [ALICE.id], respond: "all" }],
        },
      ],
    },
  });
}

/** Resolves once some process listens for the room's signals (a running call watches it). */
async function watched(room: string): Promise<void> {
  const channel = world.db.schedulerKeys.roomSignal(room);
  await waitFor(
    async () => Number(((await world.db.redis.pubsub("NUMSUB", channel)) as [string, number])[1]) > 0,
    20_000,
    "the running call to watch the room",
  );
}

describe("a running call hears of what another process queued behind it", () => {
  it("a /cancel received elsewhere stops the call at its server at once; an answer received elsewhere answers it", async () => {
    const c = config();
    await world.start(c, { workers: false });
    await world.start(c, { receivers: false });
    const group = new StandinGroup(world.standin, world.bot, GROUP);
    const said = () => group.messages().map((m) => m.text ?? "");
    await group.say(ALICE, "/tools");

    const before = said().length;
    world.standin.userSends(world.bot.token, { from: ALICE, chat: GROUP, text: "/call h.slow seconds=60" });
    await watched(group.room);
    world.standin.userSends(world.bot.token, { from: ALICE, chat: GROUP, text: "/cancel" });
    // Well inside the call's 30 s timeout, which would also end it (as a timeout).
    await waitFor(
      () =>
        said()
          .slice(before)
          .some((t) => t.startsWith("Cancelled: h.slow was stopped")),
      20_000,
      "the room to be told",
    );
    await waitFor(
      () => team.calls().some((l) => l.startsWith("cancelled:h.slow\t")),
      10_000,
      "the server to be told of the cancellation",
    );
    expect(said().some((t) => t.includes("SLOW DONE"))).toBe(false);

    world.standin.userSends(world.bot.token, { from: ALICE, chat: GROUP, text: "/call h.pay amount=12" });
    await waitFor(
      () =>
        group
          .seenBy(ALICE)
          .some((m) => m.reply_markup?.inline_keyboard.flat().some((b) => b.text.endsWith("Yes"))),
      30_000,
      "the question, for Alice alone",
    );
    await group.press(ALICE, "Yes");
    await waitFor(() => said().some((t) => t.includes(`PAID 12 as tg:${ALICE.id}`)), 30_000, "the payment");
  }, 90_000);
});
