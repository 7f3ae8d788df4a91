import type { ToolInfo } from "../namespace/tool-info.js";
import { parameterNames } from "./arguments.js";

const K1 = 1.2;
const B = 0.75;

function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

function document(tool: ToolInfo): string {
  return [tool.name, tool.title ?? "", tool.description ?? "", ...parameterNames(tool.inputSchema)].join(" ");
}

/**
 * Ranks a namespace's tools for a query: BM25 over name, title, description and
 * parameter names, with a literal substring fallback when nothing scores (a term in
 * every tool has zero IDF).
 */
export function searchTools(tools: ToolInfo[], query: string, limit = 5): ToolInfo[] {
  const terms = tokenize(query);
  if (terms.length === 0) return [];
  const docs = tools.map((t) => tokenize(document(t)));
  const avg = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length);
  const df = new Map<string, number>();
  for (const d of docs) for (const term of new Set(d)) df.set(term, (df.get(term) ?? 0) + 1);
  const scored = tools.map((tool, i) => {
    const doc = docs[i]!;
    let score = 0;
    for (const term of terms) {
      const tf = doc.filter((t) => t === term).length;
      if (tf === 0) continue;
      const n = df.get(term) ?? 0;
      const idf = Math.log((tools.length - n + 0.5) / (n + 0.5));
      score += idf * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * doc.length) / avg)));
    }
    return { tool, score };
  });
  const hits = scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score);
  if (hits.length > 0) return hits.slice(0, limit).map((h) => h.tool);
  const needle = query.trim().toLowerCase();
  return tools.filter((t) => document(t).toLowerCase().includes(needle)).slice(0, limit);
}
