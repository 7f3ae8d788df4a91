import type { CallToolResult } from "@modelcontextprotocol/client";
import type { InboundEvent } from "../../core/event.js";
import { attach, remember, say, show, type Change } from "../changes.js";
import { andThen, type StepResult } from "../composer.js";
import { proactiveTexts } from "../proactive-texts.js";
import { contentView } from "../tool-content.js";
import { runTool } from "../tool-runner.js";
import type { TurnContext } from "../turn-context.js";

type ProactiveEvent = Extract<InboundEvent, { kind: "proactive" }>;

/**
 * A turn no person started (a schedule's fire, a webhook, a resource update): marked
 * as such, then the router asked with its question, or the resource shown (or asked
 * with). Its text is never a command, a choice or a slot's answer: it is not a person.
 */
export async function proactive(ctx: TurnContext, event: ProactiveEvent): Promise<StepResult> {
  const marker = say(proactiveTexts.marker(event.source));
  let question = event.text;
  if (event.read) {
    const result = await ctx.namespace.readResource(event.read.uri);
    if (event.read.then === "show") return [marker, ...resourceView(event.read.uri, result)];
    question = [question, ...resourceTexts(result)].filter(Boolean).join("\n\n");
  }
  const router = ctx.namespace.askTool;
  if (router === null || !(await ctx.namespace.has(router))) {
    return [marker, say(proactiveTexts.noRouter(ctx.namespace.name))];
  }
  const first = [marker, remember("user", `[${event.source.type} ${event.source.name}] ${question}`)];
  return andThen(ctx, first, (next) => runTool(next, router, { question }));
}

function resourceView(uri: string, result: CallToolResult): Change[] {
  const view = contentView(uri, result);
  const attachments = view.attachments ?? [];
  if (view.blocks.length === 0 && attachments.length === 0) return [say(proactiveTexts.resourceEmpty(uri))];
  return [show(view.blocks), ...(attachments.length > 0 ? [attach(attachments)] : [])];
}

function resourceTexts(result: CallToolResult): string[] {
  return (result.content ?? []).flatMap((c) =>
    c.type === "resource" && "text" in c.resource ? [String(c.resource.text)] : [],
  );
}
