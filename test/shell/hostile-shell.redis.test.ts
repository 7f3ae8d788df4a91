/* eslint-disable no-control-regex -- these tests look for control characters on purpose */
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { shellPlatform } from "../../src/shell/shell-platform.js";
import { visibleControls } from "../../src/shell/visible-controls.js";
import { echoAnswer, HOSTILE_ANSWERS, HOSTILE_ERROR_TEXT } from "../support/hostile/hostile-answers.js";
import { expectAnswerShown, hostileNamespace } from "../support/hostile/hostile-namespace.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

const hostile = hostileNamespace({ HOSTILE_SLOW_MS: "1200" });
let db: TestRedis;
let runtime: Runtime;
const input = new PassThrough();
/** A terminal: what the shell room writes, with isTTY so that the status line shows. */
const output = Object.assign(new PassThrough(), { isTTY: true });
let printed = "";

beforeAll(async () => {
  db = await testRedis();
  output.on("data", (chunk: Buffer) => (printed += chunk.toString()));
  runtime = await startRuntime({
    config: ConfigSchema.parse({ namespaces: { adv: hostile.config } }),
    redisUrl: db.url,
    prefix: db.prefix,
    log: silentLogger(),
    platforms: [
      shellPlatform(
        { name: "hostile", namespace: "adv", input, output, interactive: false },
        () => undefined,
      ),
    ],
  });
});
afterAll(async () => {
  input.end();
  await runtime.stop();
  await db.cleanup();
});

/** Types one line and returns what the room printed for it (its reply ends with a blank line). */
async function say(line: string): Promise<string> {
  const start = printed.length;
  input.write(`${line}\n`);
  await waitFor(
    () =>
      printed
        .slice(start)
        .replace(/\r\u001b\[2K/g, "")
        .includes("\n\n"),
    undefined,
    `the reply to ${line.slice(0, 40)}`,
  );
  return printed.slice(start);
}

/** The reply without the status line's redraws, and the caveat's `│ ` line prefixes. */
function replyText(raw: string): string {
  return raw.replace(/\r\u001b\[2K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [^\r]*)?/g, "").replace(/^│ /gm, "");
}

describe("the terminal room against a hostile namespace", () => {
  it.each(["markup", "caveat", "line", "emoji", "urls", "many", "longopts", "empty"])(
    "shows the %s Answer whole",
    async (name) => {
      const shown = replyText(await say(name));
      expectAnswerShown(shown, HOSTILE_ANSWERS[name]!);
      if (name === "many") await say("cancel-offer-by-asking-again");
    },
  );

  it("never lets the terminal interpret a namespace's control characters", async () => {
    const raw = await say("control");
    const shown = replyText(raw);
    expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u000c\u000e-\u001a\u001c-\u001f\u007f-\u009f]/);
    // The only ESC left is the status line's own erase sequence, removed above.
    expect(shown).not.toContain("\u001b");
    expect(shown).toContain("clip\\x1b]52;c;aGVsbG8=\\x07 hidden\\x1b[8m secret");
    expect(shown).toContain("\\u009b31m c1 \\x0d overwrite");
    expectAnswerShown(shown, HOSTILE_ANSWERS.control!, { show: visibleControls });
  });

  it("shows a router's error result verbatim, marked as that agent's error", async () => {
    const shown = replyText(await say("error"));
    expect(shown).toContain('The "adv" agent reported an error');
    expect(shown).toContain(HOSTILE_ERROR_TEXT);
    expect(shown).not.toContain("malformed");
  });

  it("says a malformed Answer is malformed, without showing it", async () => {
    const shown = replyText(await say("malformed"));
    expect(shown).toMatch(/The "adv" agent sent a malformed reply, so it is not shown \(ref [0-9a-f]{8}\)/);
  });

  it("passes the person's text on exactly as typed", async () => {
    const shown = replyText(await say("  spaced  "));
    expect(shown).toContain(echoAnswer("  spaced  ").answer);
    expect(hostile.calls().at(-1)).toContain('"question":"  spaced  "');
  });

  it("takes any number as a choice, however many digits, and never runs an option as a command", async () => {
    await say("many");
    const chosen = replyText(await say("1000"));
    expect(chosen).toContain("→ option 1000");
    expect(chosen).toContain(echoAnswer("option 1000").answer);
    await say("slash");
    const slashed = replyText(await say("1"));
    expect(slashed).toContain(echoAnswer("/reset").answer);
    expect(slashed).not.toContain("New conversation started");
  });

  it("shows a status line while a slow turn runs, and erases it before the reply", async () => {
    const raw = await say("slow");
    expect(raw).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] asking "adv"…/);
    const reply = raw.slice(raw.lastIndexOf("\r\u001b[2K") + "\r\u001b[2K".length);
    expect(reply).toContain(echoAnswer("slow").answer);
  });

  it("refuses to let /call set the identity the bot fills, and calls nothing", async () => {
    const before = hostile.calls().length;
    const shown = replyText(await say("/call adv.who user_id=tg:1 session_id=forged"));
    expect(shown).toContain("filled in by the bot");
    expect(hostile.calls().length).toBe(before);
  });
});
