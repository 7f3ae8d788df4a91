import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callsIn, startSpine, type Spine } from "../support/spine.js";

describe("turns end to end through queue, worker, engine and the demo namespaces", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine();
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("answers 'what should I read today?' with the digest, its links and caveat", async () => {
    const d = await spine.rooms.ask("digest", "what should I read today?");
    expect(d.text).toContain("Today's digest: 3 items worth reading");
    expect(d.text).toMatch(/arxiv-2408\.01234 +https:\/\/arxiv\.org\/abs\/2408\.01234/);
    expect(d.text).not.toMatch(/[{}]"/);
    expect(d.outcome.reply?.options).toEqual([]);
  });

  it("asks back on an ambiguous question; option 2 by number calls that tool and enables it", async () => {
    const back = await spine.rooms.ask("ambiguous", "show me the feed");
    expect(back.text).toContain("Did you mean the current feed, or the whole archive?");
    expect(back.outcome.reply?.options.map((o) => o.label)).toEqual([
      expect.stringContaining("(feed.list)"),
      expect.stringContaining("(feed.search)"),
    ]);
    const before = callsIn(spine.callLog).length;
    const chosen = await spine.rooms.ask("ambiguous", "2");
    expect(chosen.outcome.chosen?.label).toContain("feed.search");
    const calls = callsIn(spine.callLog).slice(before);
    expect(calls.map((c) => c.split("\t")[0])).toEqual(["feed.search"]);
    expect(JSON.parse(calls[0]!.split("\t")[1]!)).toMatchObject({ query: "show me the feed" });
    const status = await spine.rooms.ask("ambiguous", "/status");
    expect(status.text).toMatch(/Enabled tools: .*feed\.search/);
    // The offer was used: the same number now means nothing and calls nothing.
    const again = await spine.rooms.ask("ambiguous", "2");
    expect(
      callsIn(spine.callLog)
        .slice(before)
        .filter((c) => c.startsWith("feed.search")),
    ).toHaveLength(1);
    expect(again.text).not.toContain("Found");
  });

  it("shows markup characters and newlines character for character", async () => {
    await spine.rooms.ask("markup", "/tools");
    const d = await spine.rooms.ask("markup", "/call feed.search query=markup");
    const block = d.outcome.reply!.blocks[0]!;
    expect(block.type).toBe("answer");
    expect(d.text).toContain('Found 1 item for "markup": <b>Bold</b> & *stars* _under_ `tick` &amp;');
  });

  it("refuses a tool outside the room's namespace before it reaches any server", async () => {
    const before = callsIn(spine.callLog).length;
    const d = await spine.rooms.ask("scope", "/call runs.compare family=kdsweep");
    expect(d.text).toBe("runs.compare is not a tool of this room's agent (feed). Nothing was called.");
    const search = await spine.rooms.ask("scope", "/tools compare sweep arms");
    expect(search.text).not.toContain("runs.");
    expect(callsIn(spine.callLog).slice(before)).toEqual([]);
  });

  it("refuses a tool of the namespace that is not enabled yet, and calls it once /tools enabled it", async () => {
    const before = callsIn(spine.callLog).length;
    const refused = await spine.rooms.ask("enable", "/call feed.list");
    expect(refused.text).toContain("feed.list is not enabled");
    expect(callsIn(spine.callLog).slice(before)).toEqual([]);
    await spine.rooms.ask("enable", "/tools");
    const listed = await spine.rooms.ask("enable", "/call feed.list");
    expect(listed.outcome.reply?.blocks[0]?.type).toBe("answer");
  });

  it("drops a stranger's event that reached the queue: no reply, no session, no namespace call", async () => {
    const before = callsIn(spine.callLog).length;
    const stranger = await spine.rooms.say("stranger", "what should I read today?", { allowed: false });
    const status = await spine.rooms.ask("stranger", "/status");
    expect(spine.rooms.delivered.some((d) => d.event.eventId === stranger)).toBe(false);
    // The stranger's turn left no session behind: this is the room's first turn.
    expect(status.text).toContain("Turns so far: 0");
    expect(callsIn(spine.callLog).slice(before)).toEqual([]);
  });

  it("rejects an oversized message with a clear line and no call", async () => {
    const before = callsIn(spine.callLog).length;
    const d = await spine.rooms.ask("big", "x".repeat(spine.config.limits.maxMessageChars + 1));
    expect(d.text).toContain("the limit is");
    expect(callsIn(spine.callLog).slice(before)).toEqual([]);
  });

  it("answers malformed commands clearly without calling anything", async () => {
    const before = callsIn(spine.callLog).length;
    expect((await spine.rooms.ask("cmd", "/call feed.search {not json")).text).toContain("not valid JSON");
    expect((await spine.rooms.ask("cmd", "/frobnicate")).text).toContain("Unknown command /frobnicate");
    expect((await spine.rooms.ask("cmd", "/describe")).text).toContain("Usage: /describe");
    expect(callsIn(spine.callLog).slice(before)).toEqual([]);
  });

  it("de-duplicates a redelivered platform event", async () => {
    const id = await spine.rooms.say("dedupe", "what should I read today?", { eventId: "same-update-1" });
    await spine.rooms.reply(id);
    await spine.rooms.say("dedupe", "what should I read today?", { eventId: "same-update-1" });
    const marker = await spine.rooms.ask("dedupe", "/status");
    expect(spine.rooms.delivered.filter((d) => d.event.eventId === "same-update-1")).toHaveLength(1);
    expect(marker.text).toContain("Turns so far: 1");
  });
});
