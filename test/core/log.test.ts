import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { AnswerSchema } from "../../src/core/answer.js";
import { MalformedAnswerError } from "../../src/core/errors.js";
import type * as LogModule from "../../src/core/log.js";
import { waitFor } from "../support/wait.js";

// The unit tier shares one module graph per worker: secrets other files registered (a
// one-letter test token) would mask these lines too, so each test gets its own registry.
let createLogger: typeof LogModule.createLogger;
let registerSecret: typeof LogModule.registerSecret;
beforeEach(async () => {
  vi.resetModules();
  ({ createLogger, registerSecret } = await import("../../src/core/log.js"));
});

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
    // The last line written is the barrier: once it is in the file, so are the others.
    const text = await waitFor(() => {
      const written = readFileSync(file, "utf8");
      return written.includes('"nested"') && written;
    });
    expect(text).toContain("bot configured");
    expect(text).not.toContain(token);
    expect(text).not.toContain("abcdefghijk");
    expect(text).toContain("[secret]");
    for (const line of text.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
  });
});

describe("logged errors", () => {
  it("keep their cause chain and a validation error's issues, with secrets still masked", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "roomgate-log-")), "log.jsonl");
    const log = createLogger({ destination: openSync(file, "a") });
    const token = "987654:AAE-another-secret-token";
    registerSecret(token);
    const invalid = AnswerSchema.safeParse({ ok: true, answer: 7, items: [], options: [] });
    const err = new MalformedAnswerError("adv", "adv.ask", "abcd1234", invalid.error);
    log.error({ err }, "malformed");
    log.warn({ err: new Error("outer", { cause: new Error(`inner with ${token}`) }) }, "chained");
    log.flush();
    await waitFor(() => readFileSync(file, "utf8").includes('"chained"'));
    const [malformed, chained] = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { err: Record<string, unknown> });
    expect(malformed!.err.type).toBe("MalformedAnswerError");
    const cause = malformed!.err.cause as { type: string; issues: { path: string[]; code: string }[] };
    expect(cause.type).toBe("ZodError");
    expect(cause.issues[0]).toMatchObject({ path: ["answer"], code: "invalid_type" });
    const inner = (chained!.err.cause as { message: string }).message;
    expect(inner).toBe("inner with [secret]");
  });
});

describe("a turn's lazy child logger", () => {
  it("names the turn on every line it writes, and builds no pino child for lines that are off", async () => {
    const { lazyChild } = await import("../../src/core/log.js");
    const file = join(mkdtempSync(join(tmpdir(), "roomgate-log-")), "log.jsonl");
    const log = createLogger({ level: "info", destination: openSync(file, "a") });
    const childSpy = vi.spyOn(log, "child");
    const quiet = lazyChild(log, { turn: "t-1", room: "telegram:1" });
    quiet.debug({ ms: 3 }, "turn computed");
    expect(childSpy).not.toHaveBeenCalled();
    const loud = lazyChild(log, { turn: "t-2", room: "telegram:2" });
    loud.warn({ sender: "9" }, "sender not allowed; dropped");
    loud.child({ part: 1 }).error("part failed");
    log.info("last");
    log.flush();
    const text = await waitFor(() => {
      const written = readFileSync(file, "utf8");
      return written.includes('"last"') && written;
    });
    const lines = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((l) => l.msg)).toEqual(["sender not allowed; dropped", "part failed", "last"]);
    expect(lines[0]).toMatchObject({ turn: "t-2", room: "telegram:2", sender: "9", level: 40 });
    expect(lines[1]).toMatchObject({ turn: "t-2", room: "telegram:2", part: 1 });
    // One child for the loud turn (the part's child is built from it), none for the quiet one.
    expect(childSpy.mock.calls.map(([bindings]) => bindings)).toEqual([
      { turn: "t-2", room: "telegram:2" },
      { part: 1 },
    ]);
  });
});
