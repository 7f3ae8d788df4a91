import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { shellPlatform } from "../../src/shell/shell-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { DEMO_SERVER } from "../support/spine.js";
import { waitFor } from "../support/wait.js";

const CLEAR_LINE = "\r\u001b[2K";
let db: TestRedis;
let runtime: Runtime;
const input = new PassThrough();
/** A terminal: the room prompts, and redraws its prompt line. */
const output = Object.assign(new PassThrough(), { isTTY: true, columns: 120 });
let printed = "";

beforeAll(async () => {
  db = await testRedis();
  output.on("data", (chunk: Buffer) => (printed += chunk.toString()));
  runtime = await startRuntime({
    config: ConfigSchema.parse({
      // No spinner (it would clear the line itself): a post is quick, as most are.
      queue: { typingAfterSeconds: 60 },
      namespaces: {
        feed: {
          command: [process.execPath, DEMO_SERVER],
          env: { ATTEST_TOOLS: "feed" },
        },
      },
    }),
    redisUrl: db.url,
    prefix: db.prefix,
    log: silentLogger(),
    platforms: [
      shellPlatform({ name: "prompt", namespace: "feed", input, output, interactive: true }, () => undefined),
    ],
  });
});
afterAll(async () => {
  input.end();
  await runtime.stop();
  await db.cleanup();
});

describe("an interactive terminal room", () => {
  it("writes a post nobody asked for above the line being typed, and redraws the prompt with that line", async () => {
    await waitFor(() => printed.includes("feed> "), 10_000, "the prompt");
    input.write("half a thou");
    await waitFor(() => printed.includes("half a thou"), 5_000, "the typed text echoed");
    // A post that starts without a message (as a schedule's fire or a webhook's does).
    await runtime.deps.inbox.enqueue({
      kind: "message",
      text: "what should I read today?",
      eventId: "fire:prompt:1",
      room: "shell:prompt",
      namespace: "feed",
      platform: "shell",
      sender: { id: "shell:schedule", allowed: true },
      addressed: "direct",
      receivedAt: Date.now(),
      origin: { platform: "shell" },
    });
    const answerAt = await waitFor(
      () => (printed.includes("Today's digest") ? printed.indexOf("Today's digest") : undefined),
      20_000,
      "the post",
    );
    const before = printed.slice(0, answerAt);
    // The prompt line was cleared first: the post does not run on after "half a thou".
    expect(before.slice(before.lastIndexOf("half a thou"))).toContain(CLEAR_LINE);
    // And the prompt comes back below it with what was typed, ready to go on.
    await waitFor(
      // The cursor move after the prompt is ESC [ n G; the regex spells ESC as \x1b on purpose.
      // eslint-disable-next-line no-control-regex
      () => /feed> (\u001b\[\d+G)?half a thou/.test(printed.slice(answerAt)),
      5_000,
      "the prompt redrawn",
    );
  }, 40_000);
});
