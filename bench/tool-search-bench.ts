import type { ToolInfo } from "../src/namespace/tool-info.js";

/**
 * `/tools words` over a namespace of 500 tools: the p99 of one search in
 * microseconds, through the engine's exported search. Optional: it returns
 * undefined when the search is not exported under the name it expects.
 */
export async function toolSearchP99Micros(): Promise<{ p50: number; p99: number } | undefined> {
  const mod = (await import("../src/engine/tool-search.js")) as Record<string, unknown>;
  const search = mod.searchTools;
  if (typeof search !== "function") return undefined;
  const verbs = ["list", "get", "search", "create", "compare", "plot", "export", "summarise", "tag", "link"];
  const nouns = [
    "runs",
    "sweeps",
    "items",
    "claims",
    "concepts",
    "papers",
    "metrics",
    "notes",
    "feeds",
    "users",
  ];
  const tools: ToolInfo[] = Array.from({ length: 500 }, (_, i) => {
    const verb = verbs[i % verbs.length]!;
    const noun = nouns[Math.floor(i / verbs.length) % nouns.length]!;
    return {
      name: `big.${verb}_${noun}_${i}`,
      title: `${verb} ${noun} ${i}`,
      description: `Does ${verb} on ${noun}, variant ${i}, with filters by date, owner and tag.`,
      inputSchema: {
        type: "object",
        properties: { query: { type: "string" }, [`${noun}_id`]: { type: "string" } },
      },
    };
  });
  const queries = [
    "compare sweeps",
    "plot metrics by date",
    "export papers",
    "tag owner",
    "link concepts notes",
  ];
  const times: number[] = [];
  for (let i = 0; i < 2_000; i += 1) {
    const started = process.hrtime.bigint();
    (search as (tools: ToolInfo[], query: string) => unknown)(tools, queries[i % queries.length]!);
    times.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  // The first calls warm the JIT (and any index the search builds); they are not the steady state.
  const steady = times.slice(200).sort((a, b) => a - b);
  return { p50: steady[Math.floor(steady.length * 0.5)]!, p99: steady[Math.floor(steady.length * 0.99)]! };
}
