import { z } from "zod";
import type { Answer, Ref } from "../core/answer.js";
import { FEED_ITEMS, FEED_TODAY } from "./fixtures.js";
import type { FeedItem } from "./fixtures.js";
import { answerTool, askBack, failure, runRoute, success, textTool, toolsTool, words } from "./tool.js";
import type { DemoTool, Route } from "./tool.js";

const DIGEST_SIZE = 3;
const DIGEST_CAVEAT =
  "Ranked by overlap with your recent reading; the ranking has not been checked against what you " +
  "actually finished, so treat the order as a suggestion.";

/** Words that say nothing about what to search for. */
const FILLER = new Set(
  "a an the me my i for about on of in to and or show find search look up feed archive item items anything everything all please what is are any there some".split(
    " ",
  ),
);

function ref(item: FeedItem): Ref {
  return { id: item.id, url: item.url };
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

const byDateDesc = (a: FeedItem, b: FeedItem): number => b.date.localeCompare(a.date);

/** Today's digest: the best-scored items of the current feed. */
export function feedDigest(): Answer {
  const picks = FEED_ITEMS.filter((item) => item.current)
    .toSorted((a, b) => b.score - a.score)
    .slice(0, DIGEST_SIZE);
  return success(
    `Today's digest: ${plural(picks.length, "item")} worth reading`,
    picks.map(ref),
    DIGEST_CAVEAT,
  );
}

/** The current feed, newest first. */
export function feedList(): Answer {
  const current = FEED_ITEMS.filter((item) => item.current).toSorted(byDateDesc);
  return success(`The current feed has ${plural(current.length, "item")}, newest first`, current.map(ref));
}

/** Searches the whole archive; a query of only filler words lists the whole archive. */
export function feedSearch(query: string): Answer {
  const terms = words(query).filter((word) => !FILLER.has(word));
  const archive = FEED_ITEMS.toSorted(byDateDesc);
  if (terms.length === 0) {
    return success(`The whole archive has ${plural(archive.length, "item")}, newest first`, archive.map(ref));
  }
  const scored = archive
    .map((item) => {
      const text = [item.id, item.title, item.source, ...item.tags].join(" ").toLowerCase();
      return { item, hits: terms.filter((term) => text.includes(term)).length };
    })
    .filter((entry) => entry.hits > 0)
    .toSorted((a, b) => b.hits - a.hits);
  const quoted = `"${query.trim()}"`;
  const [first] = scored;
  if (first === undefined) return failure(`Nothing in the archive matches ${quoted}. Try other words.`);
  // One hit is named in the line; several are left to the item links.
  const line =
    scored.length === 1
      ? `Found 1 item for ${quoted}: ${first.item.title}`
      : `Found ${scored.length} items for ${quoted}`;
  return success(
    line,
    scored.map((entry) => ref(entry.item)),
  );
}

/** One item by id; an unknown id is an ok:false Answer that offers a search. */
export function feedItem(id: string): Answer {
  const item = FEED_ITEMS.find((candidate) => candidate.id === id.trim());
  if (item === undefined)
    return failure(`No feed item has the id "${id}". Search for it instead?`, ["feed.search"]);
  return success(`${item.title} (${item.source}, ${item.date})`, [ref(item)]);
}

/** The current feed as a fixed-width plain-text table (the monospace fallback's test material). */
export function feedRaw(): string {
  const current = FEED_ITEMS.filter((item) => item.current).toSorted(byDateDesc);
  const width = Math.max(...current.map((item) => item.id.length));
  const lines = current.map((item) => `${item.date}  ${item.id.padEnd(width)}  ${item.title}`);
  return [`feed export ${FEED_TODAY} (${plural(current.length, "item")})`, ...lines].join("\n");
}

/** What `feed.ask` receives. */
export interface FeedQuestion {
  readonly question: string;
}

const SEARCH_PHRASE =
  /\b(?:search(?: the (?:feed|archive))?(?: for)?|find(?: me)?|look up|anything (?:about|on)|(?:items?|articles?|papers?|posts?) (?:about|on))\s+(.+)$/i;

/**
 * Routes a feed question by keyword and shape rules: an item id, reading intent,
 * a search phrase, then "archive"/"current" words. A bare "the feed" is ambiguous
 * and anything else is not a feed question: both ask back instead of guessing.
 */
export function routeFeed({ question }: FeedQuestion): Route {
  const text = question.toLowerCase();
  const mentioned = FEED_ITEMS.find((item) => text.includes(item.id.toLowerCase()));
  if (mentioned !== undefined) return { tool: "feed.item", args: { id: mentioned.id } };
  const said = new Set(words(question));
  const has = (...keys: string[]): boolean => keys.some((key) => said.has(key));
  if (
    has("digest") ||
    text.includes("worth reading") ||
    (has("read") && has("today", "now", "next", "should"))
  ) {
    return { tool: "feed.digest", args: {} };
  }
  const topic = SEARCH_PHRASE.exec(question.trim())?.[1]?.replace(/[?!.\s]+$/, "");
  if (topic) return { tool: "feed.search", args: { query: topic } };
  if (has("archive", "everything", "all")) return { tool: "feed.search", args: { query: "" } };
  if (has("current", "latest", "new", "recent", "today")) return { tool: "feed.list", args: {} };
  if (has("feed", "show", "list")) {
    return askBack("Did you mean the current feed, or the whole archive?", ["feed.list", "feed.search"]);
  }
  return askBack("I can give you today's digest, the current feed, a search, or one item. Which one?", [
    "feed.digest",
    "feed.list",
    "feed.search",
    "feed.item",
  ]);
}

const specific: readonly DemoTool[] = [
  answerTool({
    name: "feed.list",
    title: "Current feed",
    description: "What's in my feed right now? What's new? Lists the current feed, newest first.",
    input: {},
    run: feedList,
  }),
  answerTool({
    name: "feed.search",
    title: "Search the archive",
    description:
      "Find items about a topic, search the feed or the whole archive, 'anything on distillation?'. " +
      "Searches titles, tags and sources of every item ever in the feed.",
    input: {
      query: z
        .string()
        .describe("Words to look for, e.g. distillation; filler words alone list the archive."),
    },
    run: ({ query }) => feedSearch(query),
  }),
  answerTool({
    name: "feed.digest",
    title: "Today's digest",
    description: "What should I read today? What's worth reading? The few best items of today's feed.",
    input: {},
    run: feedDigest,
  }),
  answerTool({
    name: "feed.item",
    title: "One feed item",
    description: "Show one item, open an item by its id: its title, source, date and link.",
    input: {
      id: z.string().describe("The item's id, e.g. arxiv-2408.01234 (feed.list and feed.search show ids)."),
    },
    run: ({ id }) => feedItem(id),
  }),
  textTool({
    name: "feed.raw",
    title: "Raw feed export",
    description: "Export the current feed as a plain-text table (raw dump, no links).",
    run: feedRaw,
  }),
];

/** The feed namespace: its router, its tools list and its specific tools. */
export const feedTools: readonly DemoTool[] = [
  answerTool({
    name: "feed.ask",
    title: "Ask the feed",
    description:
      "Ask about your reading feed in your own words: 'what should I read today?', 'what's new?', " +
      "'anything on distillation?', 'show item arxiv-2408.01234'. Answers, or asks back when unsure.",
    input: {
      question: z.string().describe("The person's message, verbatim."),
      // Accepted so the frontend's argument filling can be observed (DEMO_CALL_LOG); the demo feed is the same for everyone.
      user: z.string().optional().describe("The platform user id of the person asking, e.g. tg:123."),
      session: z.string().optional().describe("The room's conversation id."),
    },
    run: (args) => runRoute(routeFeed(args), specific),
  }),
  toolsTool("feed", "Feed", specific),
  ...specific,
];
