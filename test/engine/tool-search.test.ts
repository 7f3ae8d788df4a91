import { describe, expect, it } from "vitest";
import { searchTools } from "../../src/engine/tool-search.js";
import type { ToolInfo } from "../../src/namespace/tool-info.js";

const tool = (name: string, description: string, props: string[] = []): ToolInfo => ({
  name,
  description,
  inputSchema: { type: "object", properties: Object.fromEntries(props.map((p) => [p, { type: "string" }])) },
});

const tools = [
  tool("runs.compare", "Compare the arms of a sweep on one metric", ["family", "metric"]),
  tool("runs.claims_check", "Check the numbers in a Markdown draft against recorded runs", ["draft"]),
  tool("runs.list", "List recorded runs"),
];

describe("tool search", () => {
  it("ranks by BM25 over name, description and parameter names", () => {
    expect(searchTools(tools, "which sweep arm")[0]!.name).toBe("runs.compare");
    expect(searchTools(tools, "draft numbers")[0]!.name).toBe("runs.claims_check");
    expect(searchTools(tools, "family")[0]!.name).toBe("runs.compare");
  });

  it("falls back to a substring when every tool has the term", () => {
    expect(searchTools(tools, "runs.").map((t) => t.name)).toEqual([
      "runs.compare",
      "runs.claims_check",
      "runs.list",
    ]);
  });

  it("finds nothing for unrelated words", () => {
    expect(searchTools(tools, "weather forecast")).toEqual([]);
  });
});
