import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SendWindow } from "../../src/core/adapter.js";
import { silentLogger } from "../../src/core/log.js";
import { UnbookedNotices } from "../../src/edge/unbooked-notices.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import { SchedulerKeys } from "../../src/scheduler/scheduler-keys.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { behindProxy, type HeldProxy } from "../support/held-proxy.js";
import { waitFor } from "../support/wait.js";

/**
 * The first bookings after an outage and the notices sent during it, on a redis-server
 * of the test's own that refuses writes for a while (OOM). Processes reach Redis again
 * up to a reconnect back-off apart: a receiver that does so after a worker records the
 * notice it sent without a slot after the worker's first bookings could be made, and the
 * two together passed a chat's limit (the fault script's `sentinel master-kill` with
 * Redis' default 30 s down-after: a notice and an answer 880 ms apart, 31 sends in a
 * second). The bookings now wait for every receiver's mark that its notices are in.
 */
const GROUP = "tg:1";
/** Refusals this long are an outage that may have come with notices (OUTAGE_MS is 4.5 s). */
const OUTAGE_MS = 4800;
/** How much later than the worker the receiver reaches Redis again: within a reconnect back-off. */
const RECEIVER_LATE_MS = 1500;

let dir: string;
let server: RedisServer;
let admin: Redis;
let proxy: HeldProxy;
let receiverRedis: Redis;
let workerRedis: Redis;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rg-notice-marks-"));
  server = await RedisServer.start({ dir: join(dir, "redis") });
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  await admin.config("SET", "maxmemory-policy", "noeviction");
  const behind = await behindProxy(server.url);
  proxy = behind.proxy;
  receiverRedis = new Redis(behind.url, { maxRetriesPerRequest: null });
  workerRedis = new Redis(server.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  proxy.release();
  receiverRedis.disconnect();
  workerRedis.disconnect();
  proxy.close();
  admin.disconnect();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the first bookings after an outage", () => {
  it("wait for a receiver that reaches Redis later to record its notice", async () => {
    const keys = new SchedulerKeys(`t${randomUUID().slice(0, 8)}`);
    const chat: SendWindow = { group: GROUP, scope: "chat:5", max: 1, windowMs: 1150 };
    const receiver = new UnbookedNotices(
      new RedisRateLimiter(receiverRedis, keys),
      silentLogger(),
      "test",
      GROUP,
    );
    const worker = new RedisRateLimiter(workerRedis, keys);
    const stop = new AbortController();
    receiver.markWhile(stop.signal);
    try {
      await waitFor(
        async () => (await admin.zcard(keys.noticeMarks(GROUP))) === 1,
        undefined,
        "the receiver's mark",
      );

      await admin.config("SET", "maxmemory", "1");
      // The worker's writes are refused as long as the outage lasts.
      const refused: string[] = [];
      let refusing = true;
      const tries = (async () => {
        while (refusing) {
          await worker
            .bookOnce([chat], `probe-${refused.length}`, 20)
            .catch((err: Error) => refused.push(err.message));
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      // The outage's length is the scenario: long enough for notices.
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));

      // The receiver's connection goes quiet (its reconnect back-off), and its notice goes without a slot.
      proxy.stall();
      let answeredAt = 0;
      await receiver.send("room-5", [chat], async () => {
        answeredAt = Date.now();
      });
      refusing = false;
      await tries;
      expect(refused.at(-1)).toMatch(/^OOM /);
      await admin.config("SET", "maxmemory", "0");
      const backAt = Date.now();
      const late = new Promise((resolve) => setTimeout(resolve, RECEIVER_LATE_MS)).then(() =>
        proxy.release(),
      );

      const member = randomUUID();
      const booked = await worker.book([chat], member, 20);
      const slotAt = Date.now() + booked.waitMs;
      await late;
      // The chat's send after the notice waits a window from it (less the 20 ms a slot may be taken early).
      expect(
        slotAt - answeredAt,
        `booked ${slotAt - backAt} ms after Redis took writes`,
      ).toBeGreaterThanOrEqual(chat.windowMs - 20);
      const notices = (await admin.zrange(keys.rate(GROUP, "chat:5"), 0, -1)).filter((m) =>
        m.startsWith("notice:"),
      );
      expect(notices).toHaveLength(1);
    } finally {
      stop.abort();
      await admin.config("SET", "maxmemory", "0");
    }
  });
});
