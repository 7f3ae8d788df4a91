import { describe, expect, it } from "vitest";
import { searchTools, stem, toolIndex } from "../../src/engine/tool-search.js";
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

describe("tool search index", () => {
  const memory = [
    tool("create_entities", "Create multiple new entities in the knowledge graph", ["entities"]),
    tool("create_relations", "Create multiple new relations between entities", ["relations"]),
    tool("read_graph", "Read the entire knowledge graph"),
    tool("open_nodes", "Open specific nodes by their names", ["names"]),
  ];

  it("stems words, so entity finds create_entities and writing finds write_file", () => {
    expect(searchTools(memory, "entity")[0]!.name).toBe("create_entities");
    expect(stem("entities")).toBe(stem("entity"));
    const fs = [tool("write_file", "Create or overwrite a file"), tool("read_file", "Read a file")];
    expect(searchTools(fs, "writing")[0]!.name).toBe("write_file");
  });

  it("splits camelCase and snake_case names into words", () => {
    const camel = [tool("getTinyImage", "Returns a picture"), tool("echo", "Echoes")];
    expect(searchTools(camel, "tiny")[0]!.name).toBe("getTinyImage");
  });

  it("ranks the one right tool first among 500 similar ones, from an index built once per list", () => {
    const many = Array.from({ length: 500 }, (_, i) =>
      tool(`svc${i}.list_items`, `List the items of service ${i}`, ["cursor"]),
    );
    many[317] = tool("svc317.archive_orders", "Archive the shipped orders of service 317", ["before"]);
    expect(toolIndex(many)).toBe(toolIndex(many));
    expect(searchTools(many, "archive shipped orders")[0]!.name).toBe("svc317.archive_orders");
    expect(searchTools(many, "orders", 3).map((t) => t.name)).toEqual(["svc317.archive_orders"]);
    const copy = [...many];
    expect(toolIndex(copy)).not.toBe(toolIndex(many));
  });
});
