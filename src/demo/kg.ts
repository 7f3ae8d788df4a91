import { z } from "zod";
import type { Answer, Ref } from "../core/answer.js";
import { CONCEPTS, EDGES } from "./fixtures.js";
import type { Concept } from "./fixtures.js";
import { answerTool, askBack, failure, runRoute, success, toolsTool, words } from "./tool.js";
import type { DemoTool, Route } from "./tool.js";

const TOP = 3;

function ref(concept: Concept): Ref {
  return { id: concept.id, url: `https://kg.example.org/concept/${concept.id}` };
}

function degree(concept: Concept): number {
  return EDGES.filter((edge) => edge.from === concept.id || edge.to === concept.id).length;
}

/** Names compare as lower-case words, so "Word-Error Rate", "word error rate" and "word-error-rate" agree. */
function normal(text: string): string {
  return words(text.replace(/[-_]/g, " ")).join(" ");
}

/** Finds a concept by id, label or alias. */
function findConcept(name: string): Concept | undefined {
  const wanted = normal(name);
  return CONCEPTS.find((concept) =>
    [concept.id, concept.label, ...concept.aliases].some((key) => normal(key) === wanted),
  );
}

/** The concepts a question names, in the order it names them, each once. */
function conceptsIn(question: string): Concept[] {
  const text = ` ${normal(question)} `;
  return CONCEPTS.flatMap((concept) => {
    const positions = [concept.id, concept.label, ...concept.aliases]
      .map((key) => text.indexOf(` ${normal(key)} `))
      .filter((position) => position >= 0);
    return positions.length === 0 ? [] : [{ concept, at: Math.min(...positions) }];
  })
    .toSorted((a, b) => a.at - b.at)
    .map((found) => found.concept);
}

/** All concepts, most connected first. */
export function kgConcepts(): Answer {
  const ranked = CONCEPTS.toSorted((a, b) => degree(b) - degree(a));
  const top = ranked.slice(0, TOP).map((concept) => `${concept.label} (${degree(concept)} links)`);
  return success(`${ranked.length} concepts; the most central are ${top.join(", ")}`, ranked.map(ref));
}

/** The shortest chain of links between two concepts (breadth-first, in the graph's fixed edge order). */
export function kgPath(from: string, to: string): Answer {
  const start = findConcept(from);
  const goal = findConcept(to);
  const unknown = start === undefined ? from : goal === undefined ? to : undefined;
  if (start === undefined || goal === undefined) {
    return failure(`I don't know a concept called "${unknown}". See the concepts first?`, ["kg.concepts"]);
  }
  if (goal.id === start.id) return success(`${start.label} is a single concept: 0 steps`, [ref(start)]);
  const previous = new Map<string, { concept: Concept; relation: string }>();
  const queue = [start];
  for (let here = queue.shift(); here !== undefined && !previous.has(goal.id); here = queue.shift()) {
    for (const edge of EDGES) {
      const nextId = edge.from === here.id ? edge.to : edge.to === here.id ? edge.from : undefined;
      const next = CONCEPTS.find((concept) => concept.id === nextId);
      if (next === undefined || next.id === start.id || previous.has(next.id)) continue;
      previous.set(next.id, { concept: here, relation: edge.relation });
      queue.push(next);
    }
  }
  if (!previous.has(goal.id)) {
    return success(`No chain of links connects ${start.label} and ${goal.label}`, [ref(start), ref(goal)]);
  }
  const chain = [goal];
  const hops: string[] = [];
  for (let step = previous.get(goal.id); step !== undefined; step = previous.get(step.concept.id)) {
    chain.unshift(step.concept);
    hops.unshift(`→ (${step.relation}) `);
  }
  // Relations read in the direction they were recorded; a chain may walk a link backwards.
  const line = chain.map((concept, i) => `${i === 0 ? "" : hops[i - 1]}${concept.label}`).join(" ");
  return success(`${line}: ${hops.length} ${hops.length === 1 ? "step" : "steps"}`, chain.map(ref));
}

/** What `kg.ask` receives. */
export interface KgQuestion {
  readonly question: string;
}

const CONNECTING = [
  "connect",
  "connects",
  "connected",
  "path",
  "link",
  "linked",
  "relate",
  "related",
  "between",
];
const CENTRAL = ["central", "important", "main", "key", "top", "concepts", "topics", "read"];

/**
 * Routes a knowledge question: connection words go to the path (when two concepts are
 * named; otherwise it asks which two), centrality words to the concept list, and
 * anything else asks back.
 */
export function routeKg({ question }: KgQuestion): Route {
  const said = new Set(words(question));
  if (CONNECTING.some((key) => said.has(key))) {
    const [from, to] = conceptsIn(question);
    if (from !== undefined && to !== undefined)
      return { tool: "kg.path", args: { from: from.id, to: to.id } };
    return askBack("Which two concepts should I connect? Pick the path tool and name them.", ["kg.path"]);
  }
  if (CENTRAL.some((key) => said.has(key))) return { tool: "kg.concepts", args: {} };
  return askBack("I can list the most central concepts, or show how two concepts connect. Which one?", [
    "kg.concepts",
    "kg.path",
  ]);
}

const specific: readonly DemoTool[] = [
  answerTool({
    name: "kg.concepts",
    title: "Central concepts",
    description:
      "Which topics are most central or most read about? Lists the knowledge graph's concepts, most connected first.",
    input: {},
    run: kgConcepts,
  }),
  answerTool({
    name: "kg.path",
    title: "How two concepts connect",
    description:
      "How does X connect to Y? How are two topics related? The shortest chain of links between them.",
    input: {
      from: z
        .string()
        .describe("The concept to start from, e.g. knowledge distillation (kg.concepts lists them)."),
      to: z.string().describe("The concept to reach, e.g. word error rate."),
    },
    run: ({ from, to }) => kgPath(from, to),
  }),
];

/** The knowledge namespace: its router, its tools list and its specific tools. */
export const kgTools: readonly DemoTool[] = [
  answerTool({
    name: "kg.ask",
    title: "Ask the knowledge graph",
    description:
      "Ask about topics and how they relate, in your own words: 'which topics are most central?', " +
      "'how does distillation connect to WER?'. Answers, or asks back when unsure.",
    input: { question: z.string().describe("The person's message, verbatim.") },
    run: (args) => runRoute(routeKg(args), specific),
  }),
  toolsTool("kg", "Knowledge", specific),
  ...specific,
];
