import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { callsIn, demoNamespaces, startSpine, type Spine } from "../support/spine.js";

let spine: Spine;
// Short for the expiry test to wait out, long enough that "in time" stays in time on a loaded box.
const SLOT_SECONDS = 3;

beforeAll(async () => {
  const demo = demoNamespaces({}, ["runs"]);
  const config = ConfigSchema.parse({
    namespaces: demo.config.namespaces,
    sessions: { slotSeconds: SLOT_SECONDS },
  });
  spine = await startSpine({ namespace: "runs", config, callLog: demo.callLog });
});
afterAll(async () => spine.stop());

describe("slot filling", () => {
  it("expires after the configured time, says so, and takes the message as a new question", async () => {
    await spine.rooms.ask("slots", "are the numbers in my draft right?");
    const prompt = await spine.rooms.ask("slots", "1");
    expect(prompt.text).toContain("I need draft");
    await new Promise((r) => setTimeout(r, SLOT_SECONDS * 1000 + 200));
    const late = await spine.rooms.ask("slots", "what runs do I have?");
    expect(late.text).toContain("has expired");
    expect(callsIn(spine.callLog).at(-1)).toBe(
      `runs.ask\t${JSON.stringify({ question: "what runs do I have?" })}`,
    );
  });

  it("still fills the argument when the answer comes in time", async () => {
    await spine.rooms.ask("in-time", "are the numbers in my draft right?");
    await spine.rooms.ask("in-time", "1");
    const draft = "kd-0.5 reached 7.9 WER on eval-v1.";
    const checked = await spine.rooms.ask("in-time", draft);
    expect(checked.text).not.toContain("has expired");
    expect(callsIn(spine.callLog).at(-1)).toBe(`runs.claims_check\t${JSON.stringify({ draft })}`);
  });
});
