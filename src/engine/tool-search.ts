import type { ToolInfo } from "../namespace/tool-info.js";
import { parameterNames } from "./arguments.js";

const K1 = 1.2;
const B = 0.75;

/**
 * A light suffix stemmer for tool vocabulary: plurals, `-ing`, `-ed` and a final
 * `e` fold together, so `entity` meets `entities` and `write` meets `writing`.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith("ing") && w.length >= 6) w = w.slice(0, -3);
  else if (w.endsWith("ed") && w.length >= 5) w = w.slice(0, -2);
  if (w.endsWith("e") && w.length > 3) w = w.slice(0, -1);
  return w;
}

/** Words of a text, identifiers split at `_ - .` and camelCase, lower-cased and stemmed. */
export function terms(text: string): string[] {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0)
    .map(stem);
}

function documentText(tool: ToolInfo): string {
  // The name counts twice: a word in a tool's name says more than one in its description.
  return [
    tool.name,
    tool.name,
    tool.title ?? "",
    tool.description ?? "",
    ...parameterNames(tool.inputSchema),
  ].join(" ");
}

interface Posting {
  doc: number;
  tf: number;
}

/**
 * BM25 over one tool list (name, title, description, parameter names), built once
 * and queried many times: postings per stemmed term, so a query touches only the
 * tools that share a word with it.
 */
export class ToolIndex {
  private readonly postings = new Map<string, Posting[]>();
  private readonly lengths: number[];
  private readonly avg: number;
  private readonly haystacks: string[];

  constructor(readonly tools: readonly ToolInfo[]) {
    this.haystacks = tools.map((t) => documentText(t).toLowerCase());
    this.lengths = tools.map((tool, doc) => {
      const counts = new Map<string, number>();
      const words = terms(documentText(tool));
      for (const term of words) counts.set(term, (counts.get(term) ?? 0) + 1);
      for (const [term, tf] of counts) {
        const list = this.postings.get(term) ?? [];
        list.push({ doc, tf });
        this.postings.set(term, list);
      }
      return words.length;
    });
    this.avg = this.lengths.reduce((n, l) => n + l, 0) / Math.max(1, tools.length);
  }

  /** The best matches for a query, best first; a literal substring match when no word scores. */
  search(query: string, limit = 5): ToolInfo[] {
    const n = this.tools.length;
    const scores = new Map<number, number>();
    for (const term of new Set(terms(query))) {
      const list = this.postings.get(term);
      // A word every tool shares tells them apart by nothing; the substring fallback handles it.
      if (!list || (list.length === n && n > 1)) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const { doc, tf } of list) {
        const norm = tf + K1 * (1 - B + (B * this.lengths[doc]!) / this.avg);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * (tf * (K1 + 1))) / norm);
      }
    }
    const hits = [...scores].filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    if (hits.length > 0) return hits.slice(0, limit).map(([doc]) => this.tools[doc]!);
    const needle = query.trim().toLowerCase();
    if (needle === "") return [];
    return this.tools.filter((_t, i) => this.haystacks[i]!.includes(needle)).slice(0, limit);
  }
}

const indexes = new WeakMap<readonly ToolInfo[], ToolIndex>();

/** The index of a tool list, built on first use; a new list (after `list_changed`) gets a new index. */
export function toolIndex(tools: readonly ToolInfo[]): ToolIndex {
  let index = indexes.get(tools);
  if (!index) {
    index = new ToolIndex(tools);
    indexes.set(tools, index);
  }
  return index;
}

/**
 * Ranks a namespace's tools for a query (DESIGN §6): BM25 with stemming over the
 * list's cached index, with a literal substring fallback. The bench times this.
 */
export function searchTools(tools: readonly ToolInfo[], query: string, limit = 5): ToolInfo[] {
  return toolIndex(tools).search(query, limit);
}
