import { describe, expect, it } from "vitest";
import { parseCallArguments } from "../../../src/engine/commands/call.js";
import { isCancel } from "../../../src/engine/commands/cancel.js";
import { commandLine } from "../../../src/engine/commands/command.js";
import { COMMANDS } from "../../../src/engine/commands/index.js";
import { parseMute } from "../../../src/engine/commands/mute.js";
import { parseSchedule } from "../../../src/engine/commands/schedule.js";

describe("command parsing", () => {
  it("splits a command from its arguments", () => {
    expect(commandLine("/tools compare runs")).toEqual({ name: "tools", rest: "compare runs" });
    expect(commandLine("/HELP")).toEqual({ name: "help", rest: "" });
    expect(commandLine("/ not a command")).toBeUndefined();
  });

  it("reads /call with key=value pairs, quoted values included", () => {
    expect(parseCallArguments("runs.compare family=kdsweep metric=\"word error\" note='a b'")).toEqual({
      ok: true,
      args: { tool: "runs.compare", pairs: { family: "kdsweep", metric: "word error", note: "a b" } },
    });
  });

  it("reads /call with a JSON object", () => {
    expect(parseCallArguments('feed.search {"query": "x"}')).toEqual({
      ok: true,
      args: { tool: "feed.search", json: { query: "x" } },
    });
  });

  it("explains malformed arguments instead of guessing", () => {
    expect(parseCallArguments("feed.search {oops")).toMatchObject({
      ok: false,
      problem: expect.stringContaining("not valid JSON"),
    });
    expect(parseCallArguments("feed.search [1]")).toMatchObject({ ok: false });
    expect(parseCallArguments("feed.search ===")).toMatchObject({
      ok: false,
      problem: expect.stringContaining("key=value"),
    });
    expect(parseCallArguments("")).toMatchObject({ ok: false, problem: expect.stringContaining("Usage") });
  });

  it("reads /schedule's verbs, a list without one, and refuses an unknown verb", () => {
    expect(parseSchedule("")).toEqual({ ok: true, args: { verb: "list" } });
    expect(parseSchedule("add every 30m what is new?")).toEqual({
      ok: true,
      args: { verb: "add", repeat: { every: 1_800_000 }, ask: "what is new?" },
    });
    expect(parseSchedule("remove 2")).toEqual({ ok: true, args: { verb: "remove", which: "2" } });
    expect(parseSchedule("add every 2x hi")).toEqual({
      ok: false,
      problem: '"2x" is not an interval like 30m, 2h or 1h30m.',
    });
    expect(parseSchedule("drop 1")).toMatchObject({ ok: false, problem: expect.stringContaining("Usage") });
  });

  it("reads /mute: the state, off, a duration; anything else is a clear problem", () => {
    expect(parseMute("")).toEqual({ ok: true, args: { verb: "show" } });
    expect(parseMute("OFF")).toEqual({ ok: true, args: { verb: "off" } });
    expect(parseMute("2h")).toEqual({ ok: true, args: { verb: "for", ms: 7_200_000 } });
    expect(parseMute("soon")).toMatchObject({ ok: false, problem: expect.stringContaining('"soon"') });
  });

  it("knows /cancel alone, with or without the bot's name, and nothing else", () => {
    expect(isCancel("/cancel")).toBe(true);
    expect(isCancel(" /CANCEL@feedbot ")).toBe(true);
    expect(isCancel("/cancel now")).toBe(false);
    expect(isCancel("cancel")).toBe(false);
    expect(isCancel("/cancelled")).toBe(false);
  });

  it("every command is one entry: a unique name, a description and who may run it", () => {
    const names = COMMANDS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const c of COMMANDS) {
      expect(c.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(c.description.length).toBeGreaterThan(0);
    }
    expect(COMMANDS.find((c) => c.name === "call")?.who).toBe("caller");
    expect(COMMANDS.find((c) => c.name === "tools")?.who).toBe("caller");
  });
});
