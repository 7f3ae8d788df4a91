import { describe, expect, it } from "vitest";
import { parseCallArguments, parseCommand } from "../../src/engine/command-parser.js";

describe("command parsing", () => {
  it("splits a command from its arguments", () => {
    expect(parseCommand("/tools compare runs")).toEqual({ name: "tools", rest: "compare runs" });
    expect(parseCommand("/HELP")).toEqual({ name: "help", rest: "" });
    expect(parseCommand("/ not a command")).toBeUndefined();
  });

  it("reads /call with key=value pairs, quoted values included", () => {
    expect(parseCallArguments("runs.compare family=kdsweep metric=\"word error\" note='a b'")).toEqual({
      ok: true,
      tool: "runs.compare",
      pairs: { family: "kdsweep", metric: "word error", note: "a b" },
    });
  });

  it("reads /call with a JSON object", () => {
    expect(parseCallArguments('feed.search {"query": "x"}')).toEqual({
      ok: true,
      tool: "feed.search",
      json: { query: "x" },
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
});
