import calculateSlot from "cluster-key-slot";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatSlot, parseSlotRanges } from "../../bench/support/range-analysis.js";
import { RedisClusterTopology } from "../../bench/support/redis-topology.js";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import type { RedisServer } from "../../src/sessions/redis-server.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { mostWithin, peakPerSecond, sendGaps } from "../support/send-gaps.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 24: the Cluster range that holds the bot's send windows (every send's bot,
 * chat and group windows, one slot) down, its master and only replica killed. Rooms
 * whose own slots are in that range wait; every other chat is answered through the
 * shards' fallback windows (src/scheduler/window-fallback.ts), a group whose minute is
 * full (its window copied there, src/scheduler/group-mirror.ts) once it has room; once
 * the range is back,
 * sends go through the bot's windows again without a chat getting two messages within
 * a second, the bot more than 30 in one, or a group more than its limit in a minute
 * (lowered to 3 here, so that it is reached on each side of both transitions).
 *
 * The group's minute is full on each side, so this takes over three minutes: it runs
 * with `npm run test:windows:groups` (ROOMGATE_LONG_TESTS=1), not in `npm test`, whose
 * windows-range-down.system test is the private chats' short version.
 */
describe.runIf(process.env.ROOMGATE_LONG_TESTS === "1")(
  "the Cluster range holding the bot's send windows down, with a group",
  () => {
    const dir = mkdtempSync(join(tmpdir(), "rg-windows-down-"));
    let cluster: RedisClusterTopology;
    let standin: TelegramApiStandin;
    let runtime: Runtime;
    let connection: RedisConnection;
    let bot: StandinBot;
    const candidates = Array.from({ length: 64 }, (_, i) => 8300 + i);
    const groupCandidates = Array.from({ length: 64 }, (_, i) => -1_008_300 - i);
    const GROUP_PER_MINUTE = 3;

    beforeAll(async () => {
      cluster = await RedisClusterTopology.start({ dir });
      standin = await TelegramApiStandin.start({ perChatRate: true });
      bot = standin.addBot();
      connection = new RedisConnection({ kind: "cluster", nodes: cluster.urls.slice(0, 2) });
      await connection.resolveWait("auto", silentLogger());
      runtime = await startRuntime({
        config: telegramConfig({
          apiRoot: standin.url,
          namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
          bots: [
            {
              token: bot.token,
              users: candidates,
              groups: groupCandidates.map((chat) => ({ chat, users: candidates, respond: "all" as const })),
            },
          ],
          sendLimits: { groupPerMinute: GROUP_PER_MINUTE },
        }),
        redis: connection,
        log: silentLogger(),
        platforms: [
          createTelegramPlatform({ polling: { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } } }),
        ],
      });
    }, 60_000);
    afterAll(async () => {
      await runtime?.stop(0);
      connection?.close();
      await standin?.close();
      await cluster?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    const say = (id: number, text: string) =>
      standin.userSends(bot.token, { from: { id, first_name: "U" }, text });
    // The outage notice (src/telegram/outage-notices.ts) is not an answer: the dead range's room may get it.
    const answers = (id: number) =>
      standin.botMessages(bot.token, id).filter((m) => !m.text?.startsWith("I can't take messages")).length;

    const sayInGroup = (chat: number, text: string) =>
      standin.userSends(bot.token, {
        from: { id: candidates[0]!, first_name: "U" },
        chat: { id: chat, type: "supergroup", title: "G" },
        text,
      });

    it("answers rooms outside the range while it is down, within Telegram's limits through both transitions", async () => {
      const { prefix, shards } = runtime.deps.keys;
      const botSlot = calculateSlot(`tg:${bot.id}`);
      let down: { master: RedisServer; ranges: [number, number][] } | undefined;
      for (const master of await cluster.masters()) {
        const ranges = parseSlotRanges((await cluster.identify(master)).slots);
        if (ranges.some(([from, to]) => botSlot >= from && botSlot <= to)) down = { master, ranges };
      }
      const inDown = (id: number) => {
        const slot = chatSlot(bot.id, id, prefix, shards);
        return down!.ranges.some(([from, to]) => slot >= from && slot <= to);
      };
      const deadChat = candidates.find(inDown)!;
      const live = candidates.filter((id) => !inDown(id)).slice(0, 3);
      const all = [deadChat, ...live];
      const group = groupCandidates.find((id) => !inDown(id))!;
      for (const id of all) say(id, "before");
      // The group's window full as the range goes down.
      for (let i = 0; i < GROUP_PER_MINUTE; i += 1) sayInGroup(group, `before ${i}`);
      await waitFor(() => all.every((id) => answers(id) === 1), 40_000, "the first answers");
      await waitFor(() => answers(group) === GROUP_PER_MINUTE, 40_000, "the group's first answers");

      const { id } = await cluster.identify(down!.master);
      const replica = await cluster.replicaOf(id);
      await Promise.all([down!.master.kill(), replica.kill()]);
      say(deadChat, "while its range is down");
      for (const id of live) say(id, "while the bot's windows are down");
      for (let i = 0; i < GROUP_PER_MINUTE; i += 1) sayInGroup(group, `while down ${i}`);
      await waitFor(() => live.every((id) => answers(id) === 2), 40_000, "the live rooms' answers");
      // The group is answered once its minute, full as the range went down, has room (a minute and a little).
      await waitFor(() => answers(group) === 2 * GROUP_PER_MINUTE, 120_000, "the group's answers");
      expect(answers(deadChat)).toBe(1);

      await down!.master.start();
      await replica.start();
      await cluster.allOk();
      // Right after the range is back: the live rooms' next answers may come through
      // either windows, and must keep each chat's second and the bot's 30 a second.
      for (const id of live) say(id, "after");
      // The group's window is full of fallback sends, put into the bot's windows at the check.
      for (let i = 0; i < GROUP_PER_MINUTE; i += 1) sayInGroup(group, `after ${i}`);
      await waitFor(() => answers(deadChat) === 2, 60_000, "the answer in the range back");
      await waitFor(() => live.every((id) => answers(id) === 3), 40_000, "the live rooms' next answers");
      // About a minute after the last fallback send (62 s measured). 120 s before round 7:
      // a slot call left for the fallback ran once the range was back and booked a slot no
      // send used, so the third send waited a second minute (docs/reliability.md, "Round 6").
      await waitFor(() => answers(group) === 3 * GROUP_PER_MINUTE, 90_000, "the group's next answers");

      const sent = standin.callsTo("sendMessage", bot.id);
      expect(sendGaps(sent)).toEqual([]);
      expect(peakPerSecond(sent)).toBeLessThanOrEqual(30);
      expect(sent.every((c) => c.ok)).toBe(true);
      const toGroup = sent.filter((c) => Number(c.params.chat_id) === group).map((c) => c.at);
      expect(mostWithin(toGroup, 60_000)).toBeLessThanOrEqual(GROUP_PER_MINUTE);
    }, 420_000);
  },
);
