import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { askYes } from "../../../src/cli/matrix/prompt.js";

describe("askYes: the operator's yes/no (roomgate matrix verify)", () => {
  it("is yes only for y or yes", async () => {
    for (const [typed, yes] of [
      ["y\n", true],
      ["YES\n", true],
      ["n\n", false],
      ["\n", false],
    ] as const) {
      const input = new PassThrough();
      const asked = askYes("match? ", input, new PassThrough());
      input.write(typed);
      expect(await asked).toBe(yes);
    }
  });

  it("is no when the input ends unanswered, instead of waiting for ever", async () => {
    const input = new PassThrough();
    const asked = askYes("match? ", input, new PassThrough());
    input.end();
    expect(await asked).toBe(false);
  });
});
