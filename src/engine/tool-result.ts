import { randomBytes } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AnswerSchema, type Answer } from "../core/answer.js";
import { MalformedAnswerError } from "../core/errors.js";
import type { Block } from "../core/reply.js";

/** What a tool result shows: blocks, and the Answer when it was one (its options become an offer). */
export interface ResultView {
  blocks: Block[];
  answer?: Answer;
}

/** A short reference id tying a person's error line to the log entry with the details. */
export function referenceId(): string {
  return randomBytes(4).toString("hex");
}

function textOf(result: CallToolResult): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (item.type === "text") parts.push(item.text);
    else if (item.type === "resource" && "text" in item.resource) parts.push(String(item.resource.text));
    else
      parts.push(
        `[${item.type} content${"mimeType" in item ? ` (${String(item.mimeType)})` : ""} is not shown here]`,
      );
  }
  return parts.join("\n");
}

/**
 * Turns a tool's result into what the person sees (DESIGN §2): a valid Answer as an
 * answer block; for the router anything else is a MalformedAnswerError; other tools
 * fall back to their text, verbatim and monospace.
 */
export function viewResult(
  namespace: string,
  tool: string,
  result: CallToolResult,
  isRouter: boolean,
): ResultView {
  const parsed = AnswerSchema.safeParse(result.structuredContent);
  if (parsed.success) {
    const a = parsed.data;
    return {
      answer: a,
      blocks: [{ type: "answer", ok: a.ok, answer: a.answer, items: a.items, caveat: a.caveat ?? null }],
    };
  }
  if (isRouter) {
    throw new MalformedAnswerError(namespace, tool, referenceId(), parsed.error);
  }
  const text = textOf(result);
  const blocks: Block[] = [];
  if (result.isError) blocks.push({ type: "text", text: `${tool} reported an error:` });
  blocks.push(
    text === "" ? { type: "text", text: `${tool} returned nothing to show.` } : { type: "code", text },
  );
  return { blocks };
}
