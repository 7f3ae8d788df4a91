import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerSecret } from "../../src/core/log.js";
import { argumentsHash, AuditLog, type AuditEntry } from "../../src/sessions/audit-log.js";
import { PAIRING_CODE_SECONDS, PairingCodes } from "../../src/sessions/pairing-codes.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

let db: TestRedis;
beforeAll(async () => {
  db = await testRedis();
});
afterAll(async () => {
  await db.cleanup();
});

const entry = (extra: Partial<AuditEntry> = {}): AuditEntry => ({
  type: "approval.granted",
  at: Date.now(),
  binding: "team",
  ...extra,
});
const all = async (log: AuditLog, since = 0) => {
  const out = [];
  for await (const e of log.since(since)) out.push(e);
  return out;
};

describe("the audit trail in Redis", () => {
  it("keeps entries no longer than audit.keepDays, even on a quiet trail of a few entries", async () => {
    const log = new AuditLog(db.redis, db.keys, 300);
    await log.record(entry({ by: "tg:1" }));
    await log.record(entry({ by: "tg:2" }));
    const kept = await all(log);
    expect(kept.map((e) => e.by)).toEqual(["tg:1", "tg:2"]);
    // An entry's age counts from its stream id (ms on the server's clock, this machine's).
    const newest = Number(kept.at(-1)!.id.split("-")[0]);
    await waitFor(() => Date.now() > newest + 300, undefined, "both entries past their age");
    // Past their age, the export no longer shows them, and the next append removes them.
    expect(await all(log)).toEqual([]);
    await log.record(entry({ by: "tg:3" }));
    expect(await db.redis.xlen(db.keys.auditTrail)).toBe(1);
    expect((await all(log)).map((e) => e.by)).toEqual(["tg:3"]);
  });

  it("records an approval nobody decided as expired exactly once, however many processes sweep", async () => {
    const log = new AuditLog(db.redis, db.keys, 3600_000);
    const before = (await all(log)).length;
    const args = { target: "prod" };
    const base = { binding: "team", requester: "tg:1", tool: "h.wipe", argumentsHash: argumentsHash(args) };
    await log.opened(
      "a1",
      { ...base, type: "approval.requested", at: Date.now() },
      { ...base, type: "approval.expired", at: Date.now() },
      Date.now() + 100,
    );
    await log.opened(
      "a2",
      { ...base, type: "approval.requested", at: Date.now() },
      { ...base, type: "approval.expired", at: Date.now() },
      Date.now() + 100,
    );
    await log.closed("a2");
    const later = Date.now() + 200;
    const swept = await Promise.all([log.sweep(later), log.sweep(later), log.sweep(later)]);
    expect(swept.reduce((a, b) => a + b, 0)).toBe(1);
    const types = (await all(log)).slice(before).map((e) => e.type);
    expect(types).toEqual(["approval.requested", "approval.requested", "approval.expired"]);
  });

  it("masks registered secrets in what it writes, arguments included", async () => {
    const secret = "s3cr3t-token-value-0123456789";
    registerSecret(secret);
    const log = new AuditLog(db.redis, db.keys, 3600_000);
    await log.record(entry({ type: "call.destructive", arguments: { target: secret } }));
    const raw = JSON.stringify(await db.redis.xrange(db.keys.auditTrail, "-", "+"));
    expect(raw).not.toContain(secret);
    expect(raw).toContain("[secret]");
  });
});

describe("pairing codes", () => {
  it("are stored only as a hash, expire within the hour and are used once", async () => {
    const codes = new PairingCodes(db.redis, db.keys);
    const { code, expiresAt } = await codes.create("team", "operator:test");
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(PAIRING_CODE_SECONDS * 1000);
    const stored = await db.redis.keys(`${db.prefix}:*pairing*`);
    expect(stored).toHaveLength(1);
    expect(stored[0]).not.toContain(code.replace(/-/g, ""));
    expect(await db.redis.get(stored[0]!)).not.toContain(code.replace(/-/g, ""));
    const ttl = await db.redis.pttl(stored[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3600_000);
    expect(await codes.use(code.toLowerCase())).toMatchObject({ binding: "team" });
    expect(await codes.use(code)).toBeUndefined();
  });

  it("refuse a sender after five wrong codes for an hour", async () => {
    const codes = new PairingCodes(db.redis, db.keys);
    for (let i = 0; i < 5; i++) {
      expect(await codes.blocked("tg:66")).toBe(false);
      await codes.failed("tg:66");
    }
    expect(await codes.blocked("tg:66")).toBe(true);
    expect(await codes.blocked("tg:67")).toBe(false);
    const ttl = await db.redis.pttl(db.keys.pairingFailures("tg:66"));
    expect(ttl).toBeGreaterThan(3500_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);
  });
});
