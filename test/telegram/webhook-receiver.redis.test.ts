import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Receiver } from "../../src/core/adapter.js";
import { silentLogger } from "../../src/core/log.js";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { permissionDeps } from "../../src/runtime.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { RecordingInbox, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 901, first_name: "Alice" };

/** The local addresses listening on a TCP port, read from the kernel's socket table. */
function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const rows = readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1);
  return rows
    .map((row) => row.trim().split(/\s+/))
    .filter((cols) => cols[1]?.endsWith(`:${hexPort}`) && cols[3] === "0A")
    .map((cols) => {
      const hex = cols[1]!.split(":")[0]!;
      return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join(".");
    });
}
const SECRET = "s3cret-token_value";

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let inbox: RecordingInbox;
let receiver: Receiver;
let port: number;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot();
  inbox = new RecordingInbox();
  port = await freePort();
  receiver = await startReceiver(inbox);
});
afterEach(async () => {
  await receiver.stop();
  await db.cleanup();
});

/** A started webhook receiver for this test's bot, port and Redis, queueing into `into`. */
async function startReceiver(into: RecordingInbox): Promise<Receiver> {
  const config = telegramConfig({
    apiRoot: standin.url,
    mode: "webhook",
    // No host: the default must be loopback (#11).
    webhook: { url: `http://127.0.0.1:${port}/telegram`, port, secretToken: SECRET },
    bots: [{ token: bot.token, users: [ALICE.id] }],
  });
  const deps = {
    config,
    redis: db.redis,
    connection: db.connection,
    keys: db.keys,
    scheduler: db.scheduler,
    inbox: into,
    limiter: new RedisRateLimiter(db.redis, db.schedulerKeys),
    log: silentLogger(),
    ...permissionDeps(config, db.redis, db.keys),
  };
  const started = createTelegramPlatform()(deps).receiver!;
  await started.start();
  return started;
}

describe("webhook mode", () => {
  it("sets each bot's webhook with the secret token and enqueues what Telegram posts", async () => {
    expect(standin.callsTo("setWebhook", bot.id)[0]!.params).toMatchObject({
      url: `http://127.0.0.1:${port}/telegram/${bot.id}`,
      secret_token: SECRET,
      allowed_updates: [
        "message",
        "edited_message",
        "callback_query",
        "my_chat_member",
        "stopped_message_generation",
      ],
    });
    const { updateId } = standin.userSends(bot.token, { from: ALICE, text: "via webhook" });
    await waitFor(() => inbox.calls.length === 1, 5000, "the event");
    expect(inbox.calls[0]).toMatchObject({
      eventId: `tg:${bot.id}:${updateId}`,
      kind: "message",
      text: "via webhook",
    });
  });

  it("refuses a request without the right secret token", async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${port}/telegram/${bot.id}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({
          update_id: 1,
          message: {
            message_id: 1,
            date: 1,
            chat: { id: ALICE.id, type: "private" },
            from: ALICE,
            text: "forged",
          },
        }),
      });
    expect((await post({ "x-telegram-bot-api-secret-token": "wrong" })).status).toBe(401);
    expect((await post({})).status).toBe(401);
    expect(inbox.calls).toEqual([]);
  });

  it("#11 binds 127.0.0.1 unless telegram.webhook.host says otherwise", () => {
    expect(listeningAddresses(port)).toEqual(["127.0.0.1"]);
  });

  it("#11 accepts only its configured path, even with the right secret token", async () => {
    const post = (path: string) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET },
        body: JSON.stringify({
          update_id: 7,
          message: {
            message_id: 7,
            date: 1,
            chat: { id: ALICE.id, type: "private" },
            from: ALICE,
            text: "stray",
          },
        }),
      });
    for (const path of [
      `/${bot.id}`,
      `/elsewhere/${bot.id}`,
      `/telegram/x/${bot.id}`,
      `/telegram//${bot.id}`,
      `/TELEGRAM/${bot.id}`,
      `/telegram/${bot.id}/`,
      `/telegram/${bot.id}x`,
    ]) {
      expect((await post(path)).status, path).toBe(404);
    }
    expect(inbox.calls).toEqual([]);
    expect((await post(`/telegram/${bot.id}`)).status).toBe(200);
    await waitFor(() => inbox.calls.length === 1, 5000, "the event on the configured path");
  });

  it("confirms an update the inbox refused once it is set aside, and queues it when the inbox takes it", async () => {
    inbox.failNext(1);
    const { updateId } = standin.userSends(bot.token, { from: ALICE, text: "retry me" });
    const statuses = () =>
      standin.webhookDeliveries.filter((d) => d.updateId === updateId).map((d) => d.status);
    await waitFor(() => inbox.calls.length === 1, 5000, "the update queued on a later try");
    expect(statuses()).toEqual([200]);
    expect(inbox.calls[0]).toMatchObject({ eventId: `tg:${bot.id}:${updateId}` });
    expect(inbox.duplicates()).toEqual([]);
  });

  it("confirms a chat's updates set aside while they cannot be queued, and after a restart queues them in order", async () => {
    // Nothing can be queued until the restart (a room's shard down): each update is set
    // aside after its wait, and confirmed, so Telegram posts the next and never these again.
    inbox.failNext(Number.MAX_SAFE_INTEGER);
    const ids = ["one", "two"].map((text) => standin.userSends(bot.token, { from: ALICE, text }).updateId);
    const statuses = (id: number) =>
      standin.webhookDeliveries.filter((d) => d.updateId === id).map((d) => d.status);
    await waitFor(() => ids.every((id) => statuses(id).includes(200)), 10_000, "both updates confirmed");
    expect(inbox.calls).toEqual([]);
    await receiver.stop();

    const after = new RecordingInbox();
    receiver = await startReceiver(after);
    await waitFor(() => after.calls.length === 2, 5000, "the updates set aside queued");
    expect(after.calls.map((e) => e.kind === "message" && e.text)).toEqual(["one", "two"]);
    expect(after.duplicates()).toEqual([]);
    // Confirmed once each, never posted again.
    expect(ids.map(statuses)).toEqual([[200], [200]]);
  });
});
