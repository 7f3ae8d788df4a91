import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerSecret } from "../../src/core/log.js";
import { argumentsHash, AuditLog, callArguments, type AuditEntry } from "../../src/sessions/audit-log.js";
import { testRedis, type TestRedis } from "../support/redis.js";

// Issue 25 (Low): a 15 KB argument cost ~32 KB of audit per call, kept 90 days.

let db: TestRedis;
beforeAll(async () => {
  db = await testRedis();
});
afterAll(async () => {
  await db.cleanup();
});

/** Bytes the trail and the open approvals hold now. */
async function storedBytes(): Promise<number> {
  const entries = await db.redis.xrange(db.keys.auditTrail, "-", "+");
  const info = await db.redis.hvals(db.keys.openApprovalInfo);
  return [...entries.map(([, fields]) => fields.join("")), ...info].reduce(
    (n, s) => n + Buffer.byteLength(s),
    0,
  );
}

describe("audit entries cap the stored arguments (audit.maxArgumentBytes)", () => {
  it("a 15 KB argument: each entry keeps its hash, its size and the first 1 KB, not the whole", async () => {
    const log = new AuditLog(db.redis, db.keys, 3600_000, 1024);
    const args = { note: "é".repeat(7_500), target: "prod" };
    const base: AuditEntry = {
      type: "approval.requested",
      at: Date.now(),
      binding: "team",
      requester: "tg:1",
      tool: "h.write",
      ...callArguments(args, true),
    };
    const before = await storedBytes();
    // What one approved destructive call writes: the request, its would-be expiry, the call.
    await log.opened("a-1", base, { ...base, type: "approval.expired" }, Date.now() + 60_000);
    await log.record({ ...base, type: "call.destructive", outcome: "ok" });
    const perCall = (await storedBytes()) - before;
    expect(perCall).toBeLessThan(5_000);
    const [entry] = (await all(log)).filter((e) => e.type === "call.destructive");
    expect(entry!.arguments).toBeUndefined();
    expect(entry!.argumentsHash).toBe(argumentsHash(args));
    expect(entry!.argumentsBytes).toBe(
      Buffer.byteLength(JSON.stringify({ note: args.note, target: "prod" })),
    );
    expect(Buffer.byteLength(entry!.argumentsHead!)).toBeLessThanOrEqual(1024);
    // Cut at a character, never inside one.
    expect(entry!.argumentsHead).toMatch(/^\{"note":"é+$/);
    console.log(`one call with a 15 KB argument: ${perCall} bytes of audit`);
  });

  it("keeps small arguments whole, and masks a secret before it is cut", async () => {
    const log = new AuditLog(db.redis, db.keys, 3600_000, 64);
    await log.record({
      type: "call.destructive",
      at: Date.now(),
      binding: "team",
      ...callArguments({ a: 1 }, true),
    });
    const secret = "cut-secret-0123456789abcdef";
    registerSecret(secret);
    // The secret straddles byte 64 of the JSON: a cut before masking would keep its start.
    const args = { pad: "x".repeat(40), token: secret };
    await log.record({
      type: "call.destructive",
      at: Date.now(),
      binding: "team",
      ...callArguments(args, true),
    });
    const [small, large] = (await all(log)).slice(-2);
    expect(small!.arguments).toEqual({ a: 1 });
    expect(large!.argumentsHead).toMatch(/"token":"\[secr$/);
    expect(JSON.stringify(await db.redis.xrange(db.keys.auditTrail, "-", "+"))).not.toContain("cut-s");
  });
});

async function all(log: AuditLog): Promise<(AuditEntry & { id: string })[]> {
  const out = [];
  for await (const e of log.since(0)) out.push(e);
  return out;
}
