import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runUsersList } from "../../src/cli/run-permissions.js";
import { parseConfig } from "../../src/core/config.js";
import { PairedUsers } from "../../src/sessions/paired-users.js";
import { testRedis, type TestRedis } from "../support/redis.js";

let db: TestRedis;
beforeAll(async () => (db = await testRedis()));
afterAll(async () => db.cleanup());

describe("roomgate users list", () => {
  it("shows a paired display name's escape codes and bidi overrides escaped, never raw", async () => {
    const config = parseConfig(
      `redis: { url: "${db.url}", prefix: ${db.prefix}, volatile: true }\n` +
        `namespaces:\n  feed: { command: [x] }\n` +
        `telegram:\n  bots:\n    - { token: "123456789:${"A".repeat(35)}", namespace: feed, name: team, users: [5] }\n`,
    );
    const hostile = "\x1b[2J\x1b[31mroot\x1b[0m\u202egnp.exe";
    await new PairedUsers(db.redis, db.keys, ["team"]).add("team", "tg:77", { pairedAt: 0, name: hostile });
    const out = new PassThrough();
    let printed = "";
    out.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    expect(await runUsersList({ config, binding: "team", out })).toBe(0);
    expect(printed).not.toContain("\x1b");
    expect(printed).not.toContain("\u202e");
    expect(printed).toContain("(\\x1b[2J\\x1b[31mroot\\x1b[0m\\u202egnp.exe)");
    expect(printed).toContain("team  tg:5  configured");
  });
});
