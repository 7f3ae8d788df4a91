import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSpine, type Spine } from "../support/spine.js";

describe("a namespace that returns a malformed Answer", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine({ env: { DEMO_MALFORMED: "1" } });
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("becomes one clear line naming the namespace and a reference, never raw JSON", async () => {
    const d = await spine.rooms.ask("bad", "what should I read today?");
    expect(d.outcome.reply?.blocks).toHaveLength(1);
    expect(d.text).toMatch(
      /^The "feed" agent sent a malformed reply, so it is not shown \(ref [0-9a-f]{8}\)\.$/,
    );
    expect(d.text).not.toContain("{");
  });
});
