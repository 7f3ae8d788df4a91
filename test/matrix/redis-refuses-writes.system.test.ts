import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Runtime } from "../../src/runtime.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { matrixRoomRuntime, repliesTo } from "../support/matrix-room-runtime.js";
import { capturingLogger } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";
import { snapshotRefusal } from "../support/snapshot-refusal.js";

/**
 * Redis refusing writes (MISCONF: a snapshot it cannot write) while a Matrix message
 * arrives: the sync does not move past it, and the message is answered, once, when
 * Redis takes writes again — it is not skipped as a failed event.
 */
let dir: string;
let server: RedisServer;
let redis: Redis;
let hs: MatrixHomeserverStandin;
let runtime: Runtime | undefined;
const capture = capturingLogger();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rg-mx-refuses-"));
  server = await RedisServer.start({ dir: join(dir, "redis") });
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  hs = await MatrixHomeserverStandin.start();
});
afterAll(async () => {
  await runtime?.stop();
  redis.disconnect();
  await hs.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

it("answers a message that arrived while Redis refused writes, once, when Redis takes them again", async () => {
  const room = await matrixRoomRuntime(hs, { redisUrl: server.url, prefix: "mx-refuses", log: capture.log });
  runtime = room.runtime;
  const { roomId, alice, sent: answers } = room;
  const first = hs.sendText(roomId, alice, "hello there");
  await waitFor(() => answers().some((e) => e.content.body !== undefined), 20_000, "the first answer");
  const before = answers().length;

  await snapshotRefusal.start(redis, join(dir, "redis"));
  const asked = hs.sendText(roomId, alice, "what failed last night?");
  await waitFor(
    () =>
      capture
        .lines()
        .filter((l) => String(l.msg).startsWith("matrix: could not queue an event"))
        .some((l) => JSON.stringify(l.err ?? "").includes("MISCONF")),
    20_000,
    "the refusal logged with what Redis said",
  );
  expect(answers()).toHaveLength(before);

  await snapshotRefusal.end(redis, join(dir, "redis"));
  await waitFor(() => repliesTo(answers(), asked.event_id).length > 0, 30_000, "the held message answered");
  expect(repliesTo(answers(), asked.event_id)).toHaveLength(1);
  expect(repliesTo(answers(), first.event_id)).toHaveLength(1);
  expect(capture.lines().some((l) => String(l.msg).includes("event skipped"))).toBe(false);
}, 90_000);

it("fetches a batch whose sync token Redis refused again within a second, so the next message is not held up by a backoff", async () => {
  await runtime?.stop();
  const room = await matrixRoomRuntime(hs, {
    redisUrl: server.url,
    prefix: "mx-refuses-token",
    log: capture.log,
  });
  runtime = room.runtime;
  const { roomId, alice, bot, sent: answers } = room;
  hs.sendText(roomId, alice, "hello there");
  await waitFor(() => answers().length > 0, 20_000, "the first answer");
  const seen = capture.lines().length;

  await snapshotRefusal.start(redis, join(dir, "redis"));
  // An event the edge ignores without Redis (the bot's own): only the batch's sync token is written.
  hs.sendText(roomId, bot.userId, "posted by the bot elsewhere");
  await waitFor(
    () =>
      capture
        .lines()
        .slice(seen)
        .some((l) => String(l.msg).startsWith("matrix") && JSON.stringify(l.err ?? "").includes("MISCONF")),
    20_000,
    "the refused sync token logged",
  );
  await snapshotRefusal.end(redis, join(dir, "redis"));
  const asked = hs.sendText(roomId, alice, "and now?");
  // The homeserver backoff (30 s for an error not the homeserver's) would hold this up.
  await waitFor(
    () => repliesTo(answers(), asked.event_id).length > 0,
    15_000,
    "the next message answered soon after Redis is back",
  );
  expect(
    capture.lines().some((l) => String(l.msg).startsWith("matrix: Redis did not take the sync's writes")),
  ).toBe(true);
}, 90_000);
