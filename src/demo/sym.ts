import { z } from "zod";
import type { Answer, Ref } from "../core/answer.js";
import { ExprError, evaluate, formatNumber, formatPoly, parseExpr, toPoly, variables } from "./expr.js";
import type { Expr } from "./expr.js";
import { SYM_EXAMPLES } from "./fixtures.js";
import { answerTool, askBack, failure, runRoute, success, toolsTool, words } from "./tool.js";
import type { DemoTool, Route } from "./tool.js";

/** Values tried for each variable when an identity is not a polynomial one. */
const SAMPLES = [1, 2, -1, 3, 0.5, -2, 1.5, 4];
const MIN_POINTS = 3;

function squash(text: string): string {
  return text.replace(/\s+/g, "");
}

/** The named example an expression is, if any, as the answer's item. */
function exampleRefs(expr: string): Ref[] {
  return SYM_EXAMPLES.filter((example) => squash(example.expr) === squash(expr)).map((example) => ({
    id: example.id,
    url: `https://sym.example.org/examples/${example.id}`,
  }));
}

function readable(error: unknown): string {
  if (error instanceof ExprError) return error.message;
  throw error;
}

function splitEquation(expr: string): [string, string] | undefined {
  const sides = expr.split(/={1,2}/);
  return sides.length === 2 ? [sides[0] ?? "", sides[1] ?? ""] : undefined;
}

function numericCheck(shown: string, left: Expr, right: Expr): Answer {
  const names = [...new Set([...variables(left), ...variables(right)])].sort();
  const points = SAMPLES.map((_, k) =>
    Object.fromEntries(names.map((name, i) => [name, SAMPLES[(k + 3 * i) % SAMPLES.length] ?? 0])),
  );
  let checked = 0;
  for (const point of points) {
    const a = evaluate(left, point);
    const b = evaluate(right, point);
    // Points where a side is undefined (a zero divisor) say nothing either way.
    if (!Number.isFinite(a) || !Number.isFinite(b)) continue;
    checked += 1;
    if (Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))) {
      const at = names.map((name) => `${name} = ${formatNumber(point[name] ?? 0)}`).join(", ");
      return success(
        `${shown} does not hold: at ${at || "every point"} the left side is ${formatNumber(a)} and the right side is ${formatNumber(b)}`,
        exampleRefs(shown),
      );
    }
  }
  if (checked < MIN_POINTS)
    return failure(`I could not find enough points where both sides of ${shown} are defined.`);
  return success(
    `${shown} holds at all ${checked} points I tried`,
    exampleRefs(shown),
    `Checked numerically at ${checked} points, not proved symbolically: the two sides are not both polynomials.`,
  );
}

/** Checks an equation: exactly when both sides are polynomials, else numerically (with a caveat saying so). */
export function symVerify(expr: string): Answer {
  const shown = expr.trim();
  const sides = splitEquation(shown);
  if (sides === undefined) {
    return failure(
      `sym.verify needs an equation with one "=", like (x+1)^2 = x^2 + 2*x + 1; "${shown}" is not one.`,
    );
  }
  let left: Expr;
  let right: Expr;
  try {
    left = parseExpr(sides[0]);
    right = parseExpr(sides[1]);
    const a = toPoly(left);
    const b = toPoly(right);
    if (a === undefined || b === undefined) return numericCheck(shown, left, right);
    const [l, r] = [formatPoly(a), formatPoly(b)];
    return l === r
      ? success(`${shown} holds: both sides expand to ${l}`, exampleRefs(shown))
      : success(
          `${shown} does not hold: the left side expands to ${l} but the right side to ${r}`,
          exampleRefs(shown),
        );
  } catch (error) {
    return failure(`I could not use "${shown}": ${readable(error)}.`);
  }
}

/** Expands and collects a polynomial expression into a canonical form. */
export function symSimplify(expr: string): Answer {
  const shown = expr.trim();
  if (shown.includes("=")) {
    return failure(`sym.simplify takes an expression, not an equation; check "${shown}" with sym.verify?`, [
      "sym.verify",
    ]);
  }
  try {
    const poly = toPoly(parseExpr(shown));
    if (poly === undefined) {
      return failure(
        `I can only simplify polynomials, and "${shown}" divides by, or raises to, an expression with a variable.`,
      );
    }
    return success(`${shown} simplifies to ${formatPoly(poly)}`, exampleRefs(shown));
  } catch (error) {
    return failure(`I could not use "${shown}": ${readable(error)}.`);
  }
}

/** Whether a text is a readable expression or equation with at least one operator or digit. */
function isExpression(text: string): boolean {
  if (!/[-+*/^=()\d]/.test(text)) return false;
  try {
    (splitEquation(text) ?? [text]).forEach((side) => parseExpr(side));
    return true;
  } catch {
    return false;
  }
}

const LEAD =
  /\b(?:simplify|expand|verify|check|prove|is|does)\s+(?:(?:that|whether|if|the expression|the equation)\s+)?(.+)$/i;
const TAIL = /(?:\s+(?:true|right|correct|hold|holds|valid|really)|\s*[?!.])+\s*$/i;

/** The expression a question carries: in backticks, after a colon, or after a verb such as "simplify". */
function expressionIn(question: string): string | undefined {
  const candidates = [
    /`([^`]+)`/.exec(question)?.[1],
    /:\s*(.+)$/.exec(question)?.[1],
    LEAD.exec(question)?.[1],
  ];
  return candidates.map((text) => text?.replace(TAIL, "").trim()).find((text) => text && isExpression(text));
}

/** What `sym.ask` receives. */
export interface SymQuestion {
  readonly question: string;
  readonly expr?: string | undefined;
}

/**
 * Routes by the shape of the expression (given, or found in the question): an
 * equation is verified, an expression is simplified. Without one, it asks back with
 * the tool the question's words point at (both when they point at neither).
 */
export function routeSym({ question, expr }: SymQuestion): Route {
  const found = expr?.trim() || expressionIn(question);
  if (found) return { tool: found.includes("=") ? "sym.verify" : "sym.simplify", args: { expr: found } };
  const said = new Set(words(question));
  const has = (...keys: string[]): boolean => keys.some((key) => said.has(key));
  const simplify = has("simplify", "simplified", "expand", "normalise", "normalize", "tidy");
  const verify = has("verify", "check", "true", "hold", "holds", "equal", "correct", "identity", "prove");
  if (simplify !== verify) {
    const tool = simplify ? "sym.simplify" : "sym.verify";
    return askBack("Which expression? Pick the tool and type the expression.", [tool]);
  }
  return askBack("I can check an equation or simplify an expression. Which one?", [
    "sym.verify",
    "sym.simplify",
  ]);
}

const specific: readonly DemoTool[] = [
  answerTool({
    name: "sym.verify",
    title: "Check an equation",
    description:
      "Is this equation true? Does this identity hold? Checks an equation exactly for polynomials, " +
      "numerically otherwise.",
    input: { expr: z.string().describe("The equation to check, e.g. (x+1)^2 = x^2 + 2*x + 1.") },
    run: ({ expr }) => symVerify(expr),
  }),
  answerTool({
    name: "sym.simplify",
    title: "Simplify an expression",
    description: "Simplify or expand this expression, tidy it up: multiplies out and collects a polynomial.",
    input: { expr: z.string().describe("The expression to simplify, e.g. (x+1)^2 - 1.") },
    run: ({ expr }) => symSimplify(expr),
  }),
];

/** The symbolic namespace: its router, its tools list and its specific tools. */
export const symTools: readonly DemoTool[] = [
  answerTool({
    name: "sym.ask",
    title: "Ask the maths helper",
    description:
      "Ask about a formula in your own words: 'is (a+b)^2 = a^2 + b^2 true?', 'simplify (x+1)^2 - 1', " +
      "'does this identity hold?'. Answers, or asks back when unsure.",
    input: {
      question: z.string().describe("The person's message, verbatim."),
      expr: z
        .string()
        .optional()
        .describe("The expression or equation the question is about, if given separately."),
    },
    run: (args) => runRoute(routeSym(args), specific),
  }),
  toolsTool("sym", "Maths", specific),
  ...specific,
];
