import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerSecret } from "../../src/core/log.js";
import { AuditLog } from "../../src/sessions/audit-log.js";
import { testRedis, type TestRedis } from "../support/redis.js";

let db: TestRedis;
beforeAll(async () => (db = await testRedis()));
afterAll(async () => db.cleanup());

describe("the audit trail", () => {
  it("masks a secret that contains \" or \\ in a call's arguments (JSON would escape it past the mask)", async () => {
    const secret = 'pa"ss\\wo"rd-1';
    registerSecret(secret);
    const audit = new AuditLog(db.redis, db.keys, 3600_000);
    await audit.record({
      type: "call.destructive",
      at: Date.now(),
      binding: "team",
      tool: "db.login",
      arguments: { password: secret, note: `again: ${secret}` },
    });
    const stored = (await db.redis.keys(`${db.prefix}:*`)).length;
    expect(stored).toBeGreaterThan(0);
    const entries = [];
    for await (const entry of audit.since(0)) entries.push(entry);
    expect(entries[0]?.arguments).toEqual({ password: "[secret]", note: "again: [secret]" });
    expect(JSON.stringify(entries)).not.toContain('pa\\"ss');
  });
});
