import { describe, expect, it } from "vitest";
import { AnswerSchema } from "../../src/core/answer.js";
import { parseClaims } from "../../src/demo/claims.js";
import { feedRaw, feedSearch, feedTools } from "../../src/demo/feed.js";
import {
  FEED_ITEMS,
  LONG_CAVEAT,
  MARKUP_ANSWER,
  MARKUP_QUERY,
  RUNS,
  UNLINKABLE_ITEM_IDS,
} from "../../src/demo/fixtures.js";
import { kgPath, kgTools } from "../../src/demo/kg.js";
import { runsClaimsCheck, runsCompare, runsTools } from "../../src/demo/runs.js";
import { symSimplify, symTools, symVerify } from "../../src/demo/sym.js";

const ALL = [...feedTools, ...runsTools, ...kgTools, ...symTools];

describe("every namespace", () => {
  it("names its tools <ns>.<verb> and gives each a title and a description", () => {
    for (const tool of ALL) {
      expect(tool.name).toMatch(/^(feed|runs|kg|sym)\.[a-z_]+$/);
      expect(tool.title.length).toBeGreaterThan(0);
      expect(tool.description.length).toBeGreaterThan(20);
    }
  });

  it("lists its specific tools from <ns>.tools", () => {
    const tools = feedTools.find((tool) => tool.name === "feed.tools");
    if (tools?.kind !== "answer") throw new Error("feed.tools missing");
    const answer = AnswerSchema.parse(tools.run({}));
    expect(answer.answer).toBe("feed has 5 tools: feed.list, feed.search, feed.digest, feed.item, feed.raw");
    expect(answer.items.map((item) => item.id)).toEqual([
      "feed.list",
      "feed.search",
      "feed.digest",
      "feed.item",
      "feed.raw",
    ]);
  });

  it("answers bad arguments with an ok:false Answer, not an exception", () => {
    for (const tool of ALL) {
      if (tool.kind !== "answer" || Object.keys(tool.input).length === 0) continue;
      const answer = AnswerSchema.parse(
        tool.run({ question: 42, query: 42, id: 42, family: 42, draft: 42, expr: 42 }),
      );
      expect(answer.ok, tool.name).toBe(false);
    }
  });
});

describe("feed", () => {
  it("finds the markup item with the exact documented answer line", () => {
    const answer = feedSearch(MARKUP_QUERY);
    expect(answer.answer).toBe(MARKUP_ANSWER);
    expect(MARKUP_ANSWER).toBe('Found 1 item for "markup": <b>Bold</b> & *stars* _under_ `tick` &amp;');
    expect(answer.items).toEqual([{ id: "markup-test", url: "https://example.org/markup?a=1&b=2" }]);
  });

  it("ships items whose url is not http(s)", () => {
    for (const id of UNLINKABLE_ITEM_IDS) {
      expect(FEED_ITEMS.find((item) => item.id === id)?.url).not.toMatch(/^https?:/);
    }
  });

  it("answers an unknown id and an empty search honestly", () => {
    const item = feedTools.find((tool) => tool.name === "feed.item");
    if (item?.kind !== "answer") throw new Error("feed.item missing");
    expect(item.run({ id: "nope" })).toMatchObject({ ok: false, options: ["feed.search"] });
    expect(feedSearch("zzzz")).toMatchObject({ ok: false, options: [] });
  });

  it("exports the raw feed as a few lines of plain text", () => {
    const lines = feedRaw().split("\n");
    expect(lines[0]).toBe("feed export 2026-08-22 (5 items)");
    expect(lines).toHaveLength(6);
  });
});

describe("runs", () => {
  it("gives longsweep a deterministic caveat of about 10,000 characters on many lines", () => {
    const answer = runsCompare("longsweep");
    expect(answer.caveat).toBe(LONG_CAVEAT);
    expect(LONG_CAVEAT.length).toBeGreaterThan(9_000);
    expect(LONG_CAVEAT.length).toBeLessThan(11_000);
    expect(LONG_CAVEAT.split("\n").length).toBeGreaterThanOrEqual(50);
  });

  it("fails an unknown sweep or metric with an Answer", () => {
    expect(runsCompare("nope")).toMatchObject({ ok: false });
    expect(runsCompare("kdsweep", "bleu")).toMatchObject({ ok: false });
    expect(runsCompare("KD sweep").ok).toBe(true);
  });

  it("reads claims from prose and Markdown tables, respecting the written precision", () => {
    const draft = [
      "Our best arm, kd-0.5, reached 7.9 WER. The WER was 9.4 for kd-0.0.",
      "",
      "| arm | WER | CER |",
      "|-----|----:|----:|",
      "| lr-3e-4 | 8.3 | 3.6% |",
      "",
      "lr-1e-3 reached a WER of 8.50, and kd-0.55 does not exist.",
    ].join("\n");
    const claims = parseClaims(draft, RUNS).map((c) => `${c.run.arm} ${c.metric} ${c.written}`);
    expect(claims).toEqual([
      "kd-0.5 wer 7.9",
      "kd-0.0 wer 9.4",
      "lr-3e-4 wer 8.3",
      "lr-3e-4 cer 3.6",
      "lr-1e-3 wer 8.50",
    ]);
    const answer = runsClaimsCheck(draft);
    expect(answer.answer).toBe("Checked 5 claims against the recorded runs: 4 match, 1 differs");
    expect(answer.caveat).toBe("lr-3e-4: the draft says 8.3 WER, but lrsweep/lr-3e-4 recorded 8.2.");
    expect(answer.items.map((item) => item.id)).toEqual([
      "kdsweep/kd-0.5",
      "kdsweep/kd-0.0",
      "lrsweep/lr-3e-4",
      "lrsweep/lr-1e-3",
    ]);
  });

  it("has no caveat when every claim matches, and fails a draft without claims", () => {
    expect(runsClaimsCheck("kd-0.75 reached 7.6 WER.")).toMatchObject({ ok: true, caveat: null });
    expect(runsClaimsCheck("We did well.")).toMatchObject({ ok: false });
    expect(runsClaimsCheck("   ")).toMatchObject({ ok: false });
  });
});

describe("kg", () => {
  it("finds no path to the unconnected concept and refuses unknown names", () => {
    expect(kgPath("lattices", "wer")).toMatchObject({
      ok: true,
      items: [{ id: "lattice-cryptography" }, {}],
    });
    expect(kgPath("quantum", "wer")).toMatchObject({ ok: false, options: ["kg.concepts"] });
  });
});

describe("sym", () => {
  it("verifies polynomial identities exactly", () => {
    expect(symVerify("(x+1)^2 = x^2 + 2*x + 1").answer).toBe(
      "(x+1)^2 = x^2 + 2*x + 1 holds: both sides expand to x^2 + 2*x + 1",
    );
    expect(symVerify("(a+b)^2 = a^2 + b^2").answer).toBe(
      "(a+b)^2 = a^2 + b^2 does not hold: the left side expands to a^2 + 2*a*b + b^2 but the right side to a^2 + b^2",
    );
  });

  it("checks other identities numerically and says so in the caveat", () => {
    const answer = symVerify("x/(x+1) + 1/(x+1) = 1");
    expect(answer.answer).toBe("x/(x+1) + 1/(x+1) = 1 holds at all 7 points I tried");
    expect(answer.caveat).toMatch(/not proved symbolically/);
    expect(symVerify("x/(x+1) = 1").answer).toBe(
      "x/(x+1) = 1 does not hold: at x = 1 the left side is 0.5 and the right side is 1",
    );
  });

  it("simplifies polynomials and refuses what it cannot read", () => {
    expect(symSimplify("(x+1)^2 - 1").answer).toBe("(x+1)^2 - 1 simplifies to x^2 + 2*x");
    expect(symSimplify("x/3*3 + 0.1 + 0.2").answer).toBe("x/3*3 + 0.1 + 0.2 simplifies to x + 0.3");
    expect(symSimplify("1/x")).toMatchObject({ ok: false });
    expect(symSimplify("x^100")).toMatchObject({ ok: false });
    expect(symSimplify("a = b")).toMatchObject({ ok: false, options: ["sym.verify"] });
    expect(symSimplify("process.exit(1)").answer).toBe(
      'I could not use "process.exit(1)": unexpected "." at position 8.',
    );
  });
});
