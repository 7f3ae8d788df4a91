import { randomBytes } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/client";
import { AnswerSchema, type Answer } from "../core/answer.js";
import { MalformedAnswerError } from "../core/errors.js";
import type { Attachment } from "../core/attachment.js";
import type { Block } from "../core/reply.js";
import { contentView } from "./tool-content.js";

/** What a tool result shows: blocks, and the Answer when it was one (its options become an offer). */
export interface ResultView {
  blocks: Block[];
  answer?: Answer;
  /** Files a non-Answer result carries (images, audio, blobs, a long text output). */
  attachments?: Attachment[];
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
 * Turns a tool's result into what the person sees (DESIGN §2): an `isError` result as the
 * server's text marked as an error of its namespace; a valid Answer as an answer block; for
 * the router anything else is a MalformedAnswerError; other tools fall back to their text,
 * verbatim and monospace.
 */
export function viewResult(
  namespace: string,
  tool: string,
  result: CallToolResult,
  isRouter: boolean,
): ResultView {
  // An error result is the server saying so, not a malformed Answer: shown as it wrote it.
  if (result.isError === true) return errorView(namespace, tool, textOf(result), isRouter);
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
  return contentView(tool, result);
}

/** A tool's `isError` result: a line naming the namespace (and tool), then the server's text verbatim. */
function errorView(namespace: string, tool: string, text: string, isRouter: boolean): ResultView {
  const head = isRouter
    ? `⚠️ The "${namespace}" agent reported an error:`
    : `⚠️ ${tool} (agent "${namespace}") reported an error:`;
  if (text === "") return { blocks: [{ type: "text", text: `${head} (it gave no error text)` }] };
  return {
    blocks: [
      { type: "text", text: head },
      { type: "code", text },
    ],
  };
}
