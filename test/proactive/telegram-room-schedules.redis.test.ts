import { describe, expect, it } from "vitest";
import { telegramRoom } from "../../src/core/room.js";
import { PROACTIVE_QUEUE } from "../../src/proactive/proactive-queue.js";
import { Queue } from "bullmq";
import { DEMO_SERVER } from "../support/spine.js";
import type { StandinUser } from "../support/telegram-api-standin.js";
import { telegramWorld } from "../support/telegram-world.js";
import { waitFor } from "../support/wait.js";

// A Telegram group's /schedule end to end through the stand-in Bot API: only the
// group's allowed users add or remove its schedules, fires arrive marked in the
// group, and a removed schedule stops.

const ALICE: StandinUser = { id: 1601, first_name: "Alice" };
const MALLORY: StandinUser = { id: 1666, first_name: "Mallory" };
const GROUP = { id: -100160, type: "supergroup" as const, title: "Feed" };
const world = telegramWorld({ username: "feed_sched_group_bot" });

const inGroup = () => world.standin.botMessages(world.bot.token, GROUP.id);
const fires = () => inGroup().filter((m) => m.text?.startsWith('⏰ Scheduled ask "every 2s"'));

async function says(from: StandinUser, text: string): Promise<void> {
  world.standin.userSends(world.bot.token, { from, chat: GROUP, text });
}

describe("/schedule in a Telegram group", () => {
  it("takes schedules from the group's allowed users only; fires arrive marked; removal stops them", async () => {
    const config = world.config({
      namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
      bot: { groups: [{ chat: GROUP.id, users: [ALICE.id], respond: "all" }] },
    });
    await world.start({ ...config, proactive: { ...config.proactive, minEverySeconds: 1 } });
    const queue = new Queue(PROACTIVE_QUEUE, {
      connection: world.db.redis,
      prefix: world.db.keys.bullmqPrefix,
    });
    try {
      await says(MALLORY, "/schedule add every 2s what should I read today?");
      await says(ALICE, "/schedule add every 2s what should I read today?");
      await waitFor(
        () => inGroup().some((m) => m.text?.startsWith("Scheduled #1")),
        20_000,
        "Alice's schedule",
      );
      // Mallory's came first in the group and was not taken: one schedule, Alice's.
      expect(await queue.getJobSchedulersCount()).toBe(1);
      expect(inGroup().filter((m) => m.text?.startsWith("Scheduled"))).toHaveLength(1);

      await waitFor(() => fires().length >= 2, 20_000, "two fires in the group");
      expect(fires()[0]!.text).toContain("digest");

      await says(MALLORY, "/schedule remove 1");
      await says(ALICE, "/schedule list");
      await waitFor(
        () => inGroup().some((m) => m.text?.startsWith("Schedules of this room:")),
        20_000,
        "the list",
      );
      expect(await queue.getJobSchedulersCount()).toBe(1);

      await says(ALICE, "/schedule remove 1");
      await waitFor(() => queue.getJobSchedulersCount().then((n) => n === 0), 20_000, "the removal");
      const removedAt = Date.now();
      // Nothing left that could fire (no job of the schedule waiting or running), and
      // whatever a fire queued before the removal answered.
      await waitFor(
        async () =>
          Object.values(await queue.getJobCounts("active", "waiting", "delayed", "prioritized")).every(
            (n) => n === 0,
          ),
        undefined,
        "no fire left to run",
      );
      await waitFor(
        () => world.db.drained(telegramRoom(world.bot.id, GROUP.id)),
        undefined,
        "the group drained",
      );
      const after = fires().filter((m) => {
        const at = /\((\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\)/.exec(m.text ?? "")?.[1];
        return at !== undefined && Date.parse(`${at.replace(" ", "T")}Z`) > removedAt;
      });
      expect(after).toEqual([]);
    } finally {
      await queue.close();
    }
  }, 90_000);
});
