import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { EVERYTHING_COMMAND } from "../support/everything.js";
import { startSpine, type Spine } from "../support/spine.js";

describe("a room on server-everything, a third-party MCP server without a router", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine({
      namespace: "everything",
      config: ConfigSchema.parse({
        namespaces: {
          everything: { command: EVERYTHING_COMMAND, prefix: "", ask: false, tools: { deny: ["get-env"] } },
          unprefixed: { command: EVERYTHING_COMMAND },
          dead: { command: ["/nonexistent/mcp-server"] },
        },
      }),
    });
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("lists its tools with /tools, without the denied one", async () => {
    const d = await spine.rooms.ask("list", "/tools");
    expect(d.text).toMatch(/"everything" has \d+ tools, now enabled/);
    expect(d.text).toContain("• echo");
    expect(d.text).not.toContain("get-env");
  });

  it("offers the tools matching a plain message's words, saying there is no router; choosing one runs it", async () => {
    const d = await spine.rooms.ask("plain", "add two numbers together, a sum");
    expect(d.text).toContain('"everything" has no router, so your message went to no tool.');
    const labels = d.outcome.reply!.options.map((o) => o.label);
    expect(labels[0]).toBe("Get Sum Tool (get-sum)");
    const chosen = await spine.rooms.ask("plain", "1");
    expect(chosen.outcome.chosen?.label).toBe("Get Sum Tool (get-sum)");
    expect(chosen.text).toContain("To run Get Sum Tool I need a (number)");
    await spine.rooms.ask("plain", "2");
    const sum = await spine.rooms.ask("plain", "40");
    expect(sum.text).toContain("The sum of 2 and 40 is 42.");
  });

  it("/describe shows enum values and defaults; a bad enum value names the allowed ones", async () => {
    const d = await spine.rooms.ask("describe", "/describe get-annotated-message");
    expect(d.text).toContain('• messageType (string, required, one of "error", "success", "debug")');
    expect(d.text).toContain("• includeImage (boolean, optional, default false)");
    await spine.rooms.ask("describe", "/tools");
    const bad = await spine.rooms.ask("describe", "/call get-annotated-message messageType=loud");
    expect(bad.text).toBe(
      'The arguments for get-annotated-message are not valid: messageType must be one of "error", "success", "debug". Nothing was called.',
    );
  });

  it("/tools words searches with stemming", async () => {
    const d = await spine.rooms.ask("search", "/tools images");
    expect(d.text).toContain("• get-tiny-image");
  });

  it("runs a task-only tool as an MCP task: started, its stages shown in place, then the result", async () => {
    await spine.rooms.ask("task", "/tools");
    const d = await spine.rooms.ask("task", '/call simulate-research-query {"topic": "bees"}');
    expect(d.text).toContain("# Research Report: bees");
    const shown = spine.rooms.progressShown.filter((p) => p.room.endsWith(":task")).map((p) => p.update);
    expect(shown[0]!.text).toMatch(/^⏳ Simulate Research Query: started \(task [\w-]+\)$/);
    // The server's stages last a second each and are polled at its interval: most, not all, are seen.
    const stages = shown.filter((u) => /: working — \w+ \w+\.\.\.$/.test(u.text));
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(new Set(shown.map((u) => u.key)).size).toBe(1);
    expect(shown.at(-1)).toMatchObject({ text: "✓ Simulate Research Query: finished", done: true });
  });

  it('says in /tools when no tool has the default prefix, naming prefix: ""', async () => {
    const event = await spine.rooms.say("hint", "/tools", { namespace: "unprefixed" });
    const d = await spine.rooms.reply(event);
    expect(d.text).toContain('none named with the prefix "unprefixed."');
    expect(d.text).toContain('`prefix: ""`');
  });

  it("a namespace that cannot start gets its cause class in chat, not 'something went wrong'", async () => {
    const event = await spine.rooms.say("dead", "hello", { namespace: "dead" });
    const d = await spine.rooms.reply(event);
    expect(d.text).toMatch(
      /^dead is not reachable \(its command was not found\); the operator has the details \(ref [0-9a-f]{8}\)\.$/,
    );
  });
});
