import { z } from "zod";
import type { Answer, Ref } from "../core/answer.js";

/** What every demo tool shares: its MCP name, title, description and zod input shape. */
interface ToolInfo {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodRawShape;
}

/** A tool whose result is an Answer, declared to MCP with the Answer `outputSchema`. */
export interface AnswerTool extends ToolInfo {
  readonly kind: "answer";
  readonly run: (args: Record<string, unknown>) => Answer;
}

/** A tool whose result is plain text only (no `structuredContent`, no `outputSchema`). */
export interface TextTool extends ToolInfo {
  readonly kind: "text";
  readonly run: (args: Record<string, unknown>) => string;
}

/** Any tool the demo server registers. */
export type DemoTool = AnswerTool | TextTool;

/** Where a router sends a question: a tool with arguments, or straight back to the person. */
export type Route =
  { readonly tool: string; readonly args: Record<string, unknown> } | { readonly answer: Answer };

interface ToolSpec<S extends z.ZodRawShape, R> {
  name: string;
  title: string;
  description: string;
  input: S;
  run: (args: z.output<z.ZodObject<S>>) => R;
}

/** Defines an Answer tool whose `run` re-checks its arguments, so an internal call with bad ones is an ok:false Answer too. */
export function answerTool<S extends z.ZodRawShape>(spec: ToolSpec<S, Answer>): AnswerTool {
  const schema = z.object(spec.input);
  return {
    ...spec,
    kind: "answer",
    run: (args) => {
      const parsed = schema.safeParse(args);
      if (parsed.success) return spec.run(parsed.data);
      const problems = parsed.error.issues.map(
        (issue) => `${issue.path.join(".") || "arguments"}: ${issue.message}`,
      );
      return failure(`${spec.name} got bad arguments (${problems.join("; ")}).`);
    },
  };
}

/** Defines a plain-text tool without arguments. */
export function textTool(spec: Omit<ToolSpec<Record<string, never>, string>, "input">): TextTool {
  return { ...spec, input: {}, kind: "text", run: () => spec.run({}) };
}

/** A successful Answer. */
export function success(answer: string, items: Ref[], caveat: string | null = null): Answer {
  return { ok: true, answer, items, caveat, options: [] };
}

/** A failed Answer: the line says what went wrong, and `options` name the tools that could help. */
export function failure(answer: string, options: string[] = []): Answer {
  return { ok: false, answer, items: [], caveat: null, options };
}

/** A router's question back to the person (never a default), with the tools it is choosing between. */
export function askBack(question: string, options: string[]): Route {
  return { answer: failure(question, options) };
}

/** Runs a route against a namespace's tools; naming a tool that does not exist is a programming error. */
export function runRoute(route: Route, tools: readonly DemoTool[]): Answer {
  if ("answer" in route) return route.answer;
  const tool = tools.find((candidate) => candidate.name === route.tool);
  if (tool?.kind !== "answer")
    throw new Error(`router chose ${route.tool}, which is not an Answer tool here`);
  return tool.run(route.args);
}

/** The `<ns>.tools` tool: lists the namespace's specific tools as items whose ids are tool names. */
export function toolsTool(namespace: string, label: string, specific: readonly DemoTool[]): AnswerTool {
  const names = specific.map((tool) => tool.name);
  return answerTool({
    name: `${namespace}.tools`,
    title: `${label} tools`,
    description:
      `Which tools does ${namespace} have? What else can it do? Lists the ${namespace} namespace's ` +
      `specific tools (${names.join(", ")}) so they can be enabled for this conversation.`,
    input: {},
    run: () =>
      success(
        `${namespace} has ${names.length} tools: ${names.join(", ")}`,
        names.map((id) => ({ id, url: null })),
      ),
  });
}

/** Lower-case words of a text (letters, digits and inner `.`/`-`), for keyword rules. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:[.-][\p{L}\p{N}]+)*/gu) ?? [];
}
