import calculateSlot from "cluster-key-slot";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisClusterTopology } from "../../bench/support/redis-topology.js";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { rangeToKill } from "../support/cluster-range.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 24 in webhook mode: a Cluster master and its only replica killed. Telegram
 * posts one update at a time and posts an unconfirmed one again rather than the next,
 * so an update whose room's range is down must be confirmed once it is set aside (as
 * the poller does), or every other chat waits behind it. The dead range's chat is
 * answered in order once the range is back.
 */
describe("webhook mode with a Cluster slot range down", () => {
  const dir = mkdtempSync(join(tmpdir(), "rg-webhook-range-"));
  let cluster: RedisClusterTopology;
  let standin: TelegramApiStandin;
  let runtime: Runtime;
  let connection: RedisConnection;
  let bot: StandinBot;
  const candidates = Array.from({ length: 64 }, (_, i) => 8400 + i);

  beforeAll(async () => {
    cluster = await RedisClusterTopology.start({ dir });
    standin = await TelegramApiStandin.start();
    bot = standin.addBot();
    connection = new RedisConnection({ kind: "cluster", nodes: cluster.urls.slice(0, 2) });
    await connection.resolveWait("auto", silentLogger());
    const port = await freePort();
    runtime = await startRuntime({
      config: telegramConfig({
        apiRoot: standin.url,
        mode: "webhook",
        webhook: { url: `http://127.0.0.1:${port}/telegram`, port, secretToken: "webhook-secret-0123" },
        namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
        bots: [{ token: bot.token, users: candidates }],
        sendLimits: { botPerSecond: 1000, chatPerSecond: 100, groupPerMinute: 1000 },
      }),
      redis: connection,
      log: silentLogger(),
      platforms: [createTelegramPlatform({ polling: { backoffMs: { initial: 50, max: 500 } } })],
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
  const answers = (id: number) => standin.botMessages(bot.token, id).map((m) => m.text ?? "");
  const confirmed = (updateId: number) =>
    standin.webhookDeliveries.some((d) => d.updateId === updateId && d.status === 200);

  it("answers other chats while a dead range's update waits, and that chat in order once the range is back", async () => {
    const { prefix, shards } = runtime.deps.keys;
    // A range without the bot's send windows, and a chat whose room is in it and one whose is not.
    const down = await rangeToKill(cluster, [calculateSlot(`tg:${bot.id}`)], {
      botId: bot.id,
      prefix,
      shards,
    });
    const inDown = down.holds;
    const deadChat = candidates.find(inDown)!;
    const liveChat = candidates.find((id) => !inDown(id))!;
    say(deadChat, "search first");
    say(liveChat, "search first");
    await waitFor(
      () => answers(deadChat).length === 1 && answers(liveChat).length === 1,
      40_000,
      "the first answers",
    );

    const { id } = await cluster.identify(down.master);
    const replica = await cluster.replicaOf(id);
    await Promise.all([down.master.kill(), replica.kill()]);
    // Two updates of the dead range's chat first: Telegram posts the next only once one is confirmed.
    const held = [say(deadChat, "search alpha").updateId, say(deadChat, "search beta").updateId];
    const live = say(liveChat, "search gamma").updateId;
    await waitFor(() => answers(liveChat).length === 2, 40_000, "the live room's answer");
    // Confirmed (set aside), not refused until Telegram gives up on them.
    expect(held.every(confirmed)).toBe(true);
    expect(confirmed(live)).toBe(true);
    expect(answers(deadChat)).toHaveLength(1);

    await down.master.start();
    await replica.start();
    await cluster.allOk();
    await waitFor(() => answers(deadChat).length === 3, 60_000, "the answers in the range back");
    const [, alpha, beta] = answers(deadChat);
    expect(alpha).toContain("alpha");
    expect(beta).toContain("beta");
    say(liveChat, "search after");
    await waitFor(() => answers(liveChat).length === 3, 40_000, "the live room's next answer");
    expect(answers(deadChat)).toHaveLength(3);
  }, 200_000);
});
