import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { DeviceLease } from "../../src/matrix/crypto/device-lease.js";
import { DeviceScripts } from "../../src/matrix/crypto/device-scripts.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { eventually, waitFor } from "../support/wait.js";

describe("DeviceLease: one owner of the Matrix device at a time", () => {
  let redis: TestRedis;
  let key: string;
  const leases: DeviceLease[] = [];
  beforeEach(async () => {
    redis = await testRedis();
    key = redis.keys.matrixDevice("@bot:x", "DEV", "lease");
  });
  afterEach(async () => {
    for (const l of leases.splice(0)) l.stopRenewing();
    await redis.cleanup();
  });

  const lease = (leaseMs = 600, scripts = new DeviceScripts(redis.redis)) => {
    const l = new DeviceLease(scripts, key, { leaseMs, pollMs: 50 }, silentLogger());
    leases.push(l);
    return l;
  };

  it("is held by one process; renewed while held; released for the next at once", async () => {
    // Long enough that a busy box's late timer is still a renewal in time.
    const a = lease(1500);
    const b = lease(1500);
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    // Renewals (the lease's time to live going up again) keep it a's past its own length.
    let renewals = 0;
    let last = Infinity;
    await waitFor(
      async () => {
        const ttl = await redis.redis.pttl(key);
        if (ttl > last) renewals += 1;
        last = ttl;
        return renewals >= 4;
      },
      undefined,
      "four renewals",
    );
    expect(a.isHeld).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    await a.release();
    expect(await b.tryAcquire()).toBe(true);
  });

  it("goes to a waiting process as its lease runs out after its holder stops renewing (a dead process)", async () => {
    // Each of b's tries: when it was sent, when it was answered, and whether it took the lease.
    const tries: { sent: number; answered: number; took: boolean }[] = [];
    const watched = new (class extends DeviceScripts {
      override async acquire(...args: Parameters<DeviceScripts["acquire"]>): Promise<boolean> {
        const sent = Date.now();
        const took = await super.acquire(...args);
        tries.push({ sent, answered: Date.now(), took });
        return took;
      }
    })(redis.redis);
    const a = lease();
    const b = lease(600, watched);
    await a.tryAcquire();
    a.stopRenewing();
    const asked = Date.now();
    const ttl = await redis.redis.pttl(key);
    const runsOut = { earliest: asked + ttl, latest: Date.now() + ttl };
    expect(await b.acquire(new AbortController().signal)).toBe(true);
    // Not before the lease ran out, and at the first try after: no try that came later was refused.
    const took = tries.at(-1)!;
    expect(took.took).toBe(true);
    expect(took.answered).toBeGreaterThanOrEqual(runsOut.earliest);
    for (const refused of tries.slice(0, -1)) expect(refused.sent).toBeLessThanOrEqual(runsOut.latest);
  });

  it("tells its holder at once when another process has it now, and fences it out", async () => {
    const a = lease();
    let lost = "";
    a.onLost((reason) => (lost = reason));
    await a.tryAcquire();
    await redis.redis.set(key, "someone-else", "PX", 60_000);
    await eventually(() => expect(lost).toContain("another process"), 2_000);
    expect(a.isHeld).toBe(false);
  });
});
