import { describe, expect, it } from "vitest";
import { AnswerSchema } from "../../src/core/answer.js";
import { feedTools, routeFeed } from "../../src/demo/feed.js";
import { KDSWEEP_CAVEAT } from "../../src/demo/fixtures.js";
import { kgTools, routeKg } from "../../src/demo/kg.js";
import { routeRuns, runsTools } from "../../src/demo/runs.js";
import { routeSym, symTools } from "../../src/demo/sym.js";
import type { DemoTool } from "../../src/demo/tool.js";

/** Calls a namespace's `ask` and checks the reply is an Answer. */
function ask(tools: readonly DemoTool[], args: Record<string, unknown>) {
  const tool = tools.find((candidate) => candidate.name.endsWith(".ask"));
  if (tool?.kind !== "answer") throw new Error("no ask tool");
  return AnswerSchema.parse(tool.run(args));
}

describe("feed router", () => {
  it("answers 'what should I read today?' with the digest", () => {
    expect(routeFeed({ question: "what should I read today?" })).toEqual({ tool: "feed.digest", args: {} });
    const answer = ask(feedTools, { question: "what should I read today?", user: "tg:1", session: "s1" });
    expect(answer.ok).toBe(true);
    expect(answer.answer).toBe("Today's digest: 3 items worth reading");
    expect(answer.items).toHaveLength(3);
    for (const item of answer.items) expect(item.url).toMatch(/^https:\/\//);
    expect(answer.options).toEqual([]);
  });

  it("asks back on 'show me the feed' instead of picking a default", () => {
    expect(ask(feedTools, { question: "show me the feed" })).toEqual({
      ok: false,
      answer: "Did you mean the current feed, or the whole archive?",
      items: [],
      caveat: null,
      options: ["feed.list", "feed.search"],
    });
  });

  it("routes search phrases, item ids, archive and current words", () => {
    expect(routeFeed({ question: "search the feed for markup" })).toEqual({
      tool: "feed.search",
      args: { query: "markup" },
    });
    expect(routeFeed({ question: "anything on distillation?" })).toEqual({
      tool: "feed.search",
      args: { query: "distillation" },
    });
    expect(routeFeed({ question: "open arxiv-2408.05678 please" })).toEqual({
      tool: "feed.item",
      args: { id: "arxiv-2408.05678" },
    });
    expect(routeFeed({ question: "the whole archive" })).toEqual({
      tool: "feed.search",
      args: { query: "" },
    });
    expect(routeFeed({ question: "what's new?" })).toEqual({ tool: "feed.list", args: {} });
  });

  it("asks back with the feed's tools on an unrelated question", () => {
    const answer = ask(feedTools, { question: "what's the weather in Oslo?" });
    expect(answer.ok).toBe(false);
    expect(answer.answer).toMatch(/\?$/);
    expect(answer.options).toEqual(["feed.digest", "feed.list", "feed.search", "feed.item"]);
  });
});

describe("runs router", () => {
  it("answers 'which arm of my sweep won?' with the kdsweep comparison and its caveat unabridged", () => {
    expect(routeRuns({ question: "which arm of my sweep won?" })).toEqual({
      tool: "runs.compare",
      args: { family: "kdsweep" },
    });
    const answer = ask(runsTools, { question: "which arm of my sweep won?" });
    expect(answer.ok).toBe(true);
    expect(answer.answer).toBe(
      "kdsweep by WER (lower is better): kd-0.75 leads with 7.6, then kd-0.5 7.9, kd-0.25 8.6, kd-0.0 9.4",
    );
    expect(answer.items.map((item) => item.id)).toEqual([
      "kdsweep/kd-0.75",
      "kdsweep/kd-0.5",
      "kdsweep/kd-0.25",
      "kdsweep/kd-0.0",
    ]);
    expect(answer.caveat).toBe(KDSWEEP_CAVEAT);
    expect(KDSWEEP_CAVEAT.split(". ").length).toBeGreaterThanOrEqual(3);
  });

  it("asks for the draft on 'are the numbers in my draft right?', offering the claims check", () => {
    expect(ask(runsTools, { question: "are the numbers in my draft right?" })).toEqual({
      ok: false,
      answer: "Which draft? Pick the claims check and paste the draft, and I will check its numbers.",
      items: [],
      caveat: null,
      options: ["runs.claims_check"],
    });
  });

  it("checks a draft carried in the question itself", () => {
    const question = "Is my draft right? kd-0.5 reached 7.9 WER and kd-0.25 reached 8.1 WER.";
    expect(routeRuns({ question })).toEqual({ tool: "runs.claims_check", args: { draft: question } });
    const answer = ask(runsTools, { question });
    expect(answer.answer).toBe("Checked 2 claims against the recorded runs: 1 matches, 1 differs");
    expect(answer.caveat).toBe("kd-0.25: the draft says 8.1 WER, but kdsweep/kd-0.25 recorded 8.6.");
  });

  it("takes a named sweep and metric from the question", () => {
    expect(routeRuns({ question: "compare lrsweep by cer" })).toEqual({
      tool: "runs.compare",
      args: { family: "lrsweep", metric: "cer" },
    });
    expect(routeRuns({ question: "what runs do I have?" })).toEqual({ tool: "runs.list", args: {} });
  });

  it("asks back with the runs tools on an unrelated question", () => {
    const answer = ask(runsTools, { question: "what should I read today?" });
    expect(answer.ok).toBe(false);
    expect(answer.options).toEqual(["runs.compare", "runs.claims_check", "runs.list"]);
  });
});

describe("kg router", () => {
  it("routes centrality and connection questions", () => {
    expect(routeKg({ question: "which topics are most central?" })).toEqual({
      tool: "kg.concepts",
      args: {},
    });
    expect(routeKg({ question: "how does distillation connect to WER?" })).toEqual({
      tool: "kg.path",
      args: { from: "knowledge-distillation", to: "word-error-rate" },
    });
    expect(ask(kgTools, { question: "how does distillation connect to WER?" }).answer).toBe(
      "knowledge distillation → (trains) student model → (is measured by) word error rate: 2 steps",
    );
  });

  it("asks which two concepts when a connection question names fewer than two", () => {
    const answer = ask(kgTools, { question: "how are these related?" });
    expect(answer).toMatchObject({ ok: false, options: ["kg.path"] });
  });

  it("asks back with the kg tools on an unrelated question", () => {
    expect(ask(kgTools, { question: "good morning" }).options).toEqual(["kg.concepts", "kg.path"]);
  });
});

describe("sym router", () => {
  it("verifies an equation and simplifies an expression found in the question", () => {
    expect(routeSym({ question: "is (a+b)^2 = a^2 + b^2 true?" })).toEqual({
      tool: "sym.verify",
      args: { expr: "(a+b)^2 = a^2 + b^2" },
    });
    expect(routeSym({ question: "simplify (x+1)^2 - 1" })).toEqual({
      tool: "sym.simplify",
      args: { expr: "(x+1)^2 - 1" },
    });
    expect(routeSym({ question: "what about this?", expr: "(x+1)^2 = x^2 + 2*x + 1" })).toEqual({
      tool: "sym.verify",
      args: { expr: "(x+1)^2 = x^2 + 2*x + 1" },
    });
  });

  it("asks for the expression, or for the tool, instead of guessing", () => {
    expect(ask(symTools, { question: "can you simplify something for me" }).options).toEqual([
      "sym.simplify",
    ]);
    expect(ask(symTools, { question: "hello there" })).toMatchObject({
      ok: false,
      options: ["sym.verify", "sym.simplify"],
    });
  });
});
