import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLogger, registerSecret } from "../../src/core/log.js";

describe("the JSON logger", () => {
  it("never writes a registered secret or a token field", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "roomgate-log-")), "log.jsonl");
    const log = createLogger({ destination: openSync(file, "a") });
    const token = "123456:AAE-very-secret-bot-token";
    registerSecret(token);
    log.error(`request to https://api.telegram.org/bot${token}/getMe failed`);
    log.info({ token, bot: { token } }, "bot configured");
    log.info({ headers: { Authorization: "Bearer abcdefghijk" } }, "namespace configured");
    log.warn({ err: new Error(`fetch https://api.telegram.org/bot${token}/x failed`) }, "send failed");
    log.warn({ detail: { url: `https://h/bot${token}/y` } }, "nested");
    log.flush();
    await new Promise((r) => setTimeout(r, 100));
    const text = readFileSync(file, "utf8");
    expect(text).toContain("bot configured");
    expect(text).not.toContain(token);
    expect(text).not.toContain("abcdefghijk");
    expect(text).toContain("[secret]");
    for (const line of text.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
  });
});
