import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { DeviceLease } from "../../src/matrix/crypto/device-lease.js";
import { DeviceScripts } from "../../src/matrix/crypto/device-scripts.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { eventually } from "../support/wait.js";

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

  const lease = (leaseMs = 600) => {
    const l = new DeviceLease(new DeviceScripts(redis.redis), key, { leaseMs, pollMs: 50 }, silentLogger());
    leases.push(l);
    return l;
  };

  it("is held by one process; renewed while held; released for the next at once", async () => {
    const a = lease();
    const b = lease();
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    // Several lease lengths later it is still a's: renewals keep it.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(a.isHeld).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    await a.release();
    expect(await b.tryAcquire()).toBe(true);
  });

  it("goes to a waiting process within the lease after its holder stops renewing (a dead process)", async () => {
    const a = lease();
    const b = lease();
    await a.tryAcquire();
    a.stopRenewing();
    const stoppedAt = Date.now();
    expect(await b.acquire(new AbortController().signal)).toBe(true);
    expect(Date.now() - stoppedAt).toBeLessThan(600 + 300);
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
