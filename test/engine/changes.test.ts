import { describe, expect, it } from "vitest";
import { applyToSession, offer, reset, setSlot } from "../../src/engine/changes.js";
import { newSession, type Offer, type Session } from "../../src/sessions/session.js";

const anOffer = (id: string, now: number): Offer => ({
  id,
  question: "which?",
  options: [{ token: `${id}-1`, option: "1", label: "one" }],
  messageRefs: ["m1"],
  createdAt: now,
  expiresAt: now + 60_000,
});

describe("applyToSession", () => {
  it("leaves the session it was given as it was, and what a caller sets on the result stays there", () => {
    const now = Date.now();
    const start: Session = { ...newSession("ns", now), offers: [anOffer("a", now)], enabled: ["x"] };
    const before = structuredClone(start);
    const after = applyToSession(start, [
      offer(anOffer("b", now)),
      setSlot("alice", {
        tool: "t",
        args: { q: 1 },
        missing: [{ name: "n" }],
        question: "n?",
        createdAt: now,
      }),
      { type: "take", eventIds: ["e1"] },
    ]);
    // The turn runner sets a sent offer's message refs on the session it commits.
    after.offers[0]!.messageRefs = [...after.offers[0]!.messageRefs, "m2"];
    after.enabled.push("y");
    expect(start).toEqual(before);
    expect(after.offers.map((o) => o.id)).toEqual(["a", "b"]);
    expect(after.offers[0]!.messageRefs).toEqual(["m1", "m2"]);
    expect(after.slots).toHaveLength(1);
    expect(after.taken).toEqual(["e1"]);
  });

  it("starts a reset conversation from a copy of the session it names", () => {
    const fresh = newSession("ns");
    const after = applyToSession(newSession("ns"), [reset(fresh)]);
    after.taken.push("e2");
    expect(fresh.taken).toEqual([]);
    expect(after.conversationId).toBe(fresh.conversationId);
  });
});
