import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { EngineHarness } from "../support/engine-harness.js";
import { startMcpHttpServer, type McpHttpServer } from "../support/mcp-http-server.js";

const SLOT_SECONDS = 900;
let server: McpHttpServer;
let engine: EngineHarness;

beforeAll(async () => {
  server = await startMcpHttpServer({ namespaces: ["runs"] });
  engine = new EngineHarness(
    { namespaces: { runs: { url: server.url } }, sessions: { slotSeconds: SLOT_SECONDS } },
    "runs",
  );
});
afterAll(async () => {
  await engine.close();
  await server.close();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Moves the clock (Date only: timers and I/O stay real) `seconds` past now. */
const later = (seconds: number) => vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + seconds * 1000 });

describe("slot filling", () => {
  it("expires after the configured time, says so, and takes the message as a new question", async () => {
    await engine.ask("slots", "are the numbers in my draft right?");
    const prompt = await engine.ask("slots", "1");
    expect(prompt.text).toContain("I need draft");
    later(SLOT_SECONDS + 1);
    const late = await engine.ask("slots", "what runs do I have?");
    expect(late.text).toContain("has expired");
    expect(server.calls.at(-1)).toBe(`runs.ask\t${JSON.stringify({ question: "what runs do I have?" })}`);
  });

  it("still fills the argument when the answer comes in time", async () => {
    await engine.ask("in-time", "are the numbers in my draft right?");
    await engine.ask("in-time", "1");
    later(SLOT_SECONDS - 5);
    const draft = "kd-0.5 reached 7.9 WER on eval-v1.";
    const checked = await engine.ask("in-time", draft);
    expect(checked.text).not.toContain("has expired");
    expect(server.calls.at(-1)).toBe(`runs.claims_check\t${JSON.stringify({ draft })}`);
  });
});
