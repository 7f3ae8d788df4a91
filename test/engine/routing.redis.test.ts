import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSpine, type Spine } from "../support/spine.js";

describe("the named routing turns of the runs agent, through the queue", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine({ namespace: "runs" });
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("'which arm of my sweep won?' shows the comparison with its caveat unabridged", async () => {
    const d = await spine.rooms.ask("sweep", "which arm of my sweep won?");
    const block = d.outcome.reply!.blocks[0]!;
    expect(block.type).toBe("answer");
    if (block.type !== "answer") return;
    expect(block.ok).toBe(true);
    expect(block.caveat && block.caveat.length).toBeGreaterThan(40);
    expect(d.text).toContain(block.answer);
    expect(d.text).toContain(block.caveat!);
  });

  it("'are the numbers in my draft right?' leads to the claims check, which asks for the draft", async () => {
    const d = await spine.rooms.ask("claims", "are the numbers in my draft right?");
    expect(d.text).toContain("runs.claims_check");
    const asked = await spine.rooms.ask("claims", "1");
    expect(asked.text).toMatch(/need draft/);
    const checked = await spine.rooms.ask("claims", "kd-0.5 reached 7.9 WER on the dev set.");
    const block = checked.outcome.reply!.blocks[0]!;
    expect(block.type).toBe("answer");
    expect(checked.text).toMatch(/claim/i);
  });
});
