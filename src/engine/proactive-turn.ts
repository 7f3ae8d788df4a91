import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { InboundEvent } from "../core/event.js";
import { proactiveTexts } from "./proactive-texts.js";
import { contentView } from "./tool-content.js";
import { runTool } from "./tool-runner.js";
import type { Turn } from "./turn.js";

type ProactiveEvent = Extract<InboundEvent, { kind: "proactive" }>;

/**
 * A turn no person started (a schedule's fire, a webhook, a resource update): marked
 * as such, then the router asked with its question, or the resource shown (or asked
 * with). Its text is never a command, a choice or a slot's answer: it is not a person.
 */
export async function runProactive(turn: Turn, event: ProactiveEvent): Promise<void> {
  turn.say(proactiveTexts.marker(event.source));
  let question = event.text;
  if (event.read) {
    const result = await turn.namespace.readResource(event.read.uri);
    if (event.read.then === "show") {
      const view = contentView(event.read.uri, result);
      if (view.blocks.length === 0 && (view.attachments ?? []).length === 0) {
        turn.say(proactiveTexts.resourceEmpty(event.read.uri));
      }
      turn.show(view.blocks);
      turn.attach(view.attachments ?? []);
      return;
    }
    question = [question, ...resourceTexts(result)].filter(Boolean).join("\n\n");
  }
  const router = turn.namespace.askTool;
  if (router === null || !(await turn.namespace.has(router))) {
    turn.say(proactiveTexts.noRouter(turn.namespace.name));
    return;
  }
  turn.remember("user", `[${event.source.type} ${event.source.name}] ${question}`);
  await runTool(turn, router, { question });
}

function resourceTexts(result: CallToolResult): string[] {
  return (result.content ?? []).flatMap((c) =>
    c.type === "resource" && "text" in c.resource ? [String(c.resource.text)] : [],
  );
}
