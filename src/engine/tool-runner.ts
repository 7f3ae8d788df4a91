import { MalformedAnswerError, NamespaceError } from "../core/errors.js";
import type { ToolInfo } from "../namespace/tool-info.js";
import { scopeRefusalsTotal } from "../ops/metrics.js";
import { fillArguments, validateArguments } from "./arguments.js";
import { askApproval, needsApproval } from "./approvals.js";
import { runCall } from "./call-runner.js";
import { addressArguments, ambiguousCandidates, offerCandidates } from "./discovery.js";
import { addOffer } from "./offers.js";
import { namespaceTexts } from "./namespace-texts.js";
import { texts } from "./texts.js";
import { viewResult } from "./tool-result.js";
import type { Turn } from "./turn.js";

/** How a tool came to be called: from a question, a chosen option or an explicit /call. */
export interface RunOptions {
  question?: string;
  explicit?: Record<string, unknown>;
}

/** The tools a room may call right now: the router and tools tool, plus what was enabled. */
export function isEnabled(turn: Turn, tool: string): boolean {
  const ns = turn.namespace;
  const d = ns.discovery;
  // A namespace found by address works through its discovery tools from the start.
  const discovery = d !== undefined && (tool === d.search || tool === d.describe || tool === d.call);
  return tool === ns.askTool || tool === ns.toolsTool || discovery || turn.session.enabled.includes(tool);
}

/** Adds tools to the room's enabled set (additive for the conversation, DESIGN §6). */
export function enable(turn: Turn, tools: string[]): void {
  turn.session.enabled = [...new Set([...turn.session.enabled, ...tools])];
}

/**
 * Calls one tool of the room's namespace: checks scope right before the call, fills
 * and validates arguments (asking for missing ones), shows the result verbatim and
 * turns an Answer's options into an offer.
 */
export async function runTool(turn: Turn, toolName: string, options: RunOptions = {}): Promise<void> {
  const ns = turn.namespace;
  const tools = await ns.tools();
  const tool = tools.find((t) => t.name === toolName);
  if (!tool) {
    // A tool outside the room's namespace does not exist for this room (DESIGN §6).
    scopeRefusalsTotal.inc({ namespace: ns.name, reason: "not_in_namespace" });
    turn.say(texts.notInNamespace(toolName, ns.name));
    return;
  }
  if (!isEnabled(turn, toolName)) {
    scopeRefusalsTotal.inc({ namespace: ns.name, reason: "not_enabled" });
    turn.say(texts.notEnabled(toolName));
    return;
  }
  const { args, missing } = fillArguments(
    tool.inputSchema,
    {
      question: options.question,
      userId: turn.event.sender.id,
      conversationId: turn.session.conversationId,
      history: turn.history,
    },
    options.explicit,
  );
  if (missing.length > 0) {
    turn.session.slot = {
      tool: toolName,
      args,
      missing,
      question: options.question ?? "",
      createdAt: Date.now(),
    };
    const first = missing[0]!;
    turn.say(texts.askForArgument(tool.title ?? toolName, first.name, first.description, first.type));
    return;
  }
  await callChecked(turn, tool, args, options.question ?? "");
}

/** Validates and calls a tool whose arguments are complete. */
export async function callChecked(
  turn: Turn,
  tool: ToolInfo,
  args: Record<string, unknown>,
  question: string,
  approved = false,
): Promise<void> {
  const ns = turn.namespace;
  const problem = validateArguments(tool.inputSchema, args);
  if (problem) {
    turn.say(texts.invalidArguments(tool.name, problem));
    return;
  }
  if (tool.execution?.taskSupport === "required" && !ns.runsTasks) {
    turn.say(namespaceTexts.taskRequired(tool.name));
    return;
  }
  // The last of the three scope checks: nothing outside the namespace and enabled set is sent.
  if (!tool.name.startsWith(ns.prefix) || !isEnabled(turn, tool.name)) {
    scopeRefusalsTotal.inc({ namespace: ns.name, reason: "not_in_namespace" });
    turn.say(texts.notInNamespace(tool.name, ns.name));
    return;
  }
  if (!approved && needsApproval(turn, tool)) {
    askApproval(turn, tool, args, question);
    return;
  }
  try {
    const outcome = await runCall(turn, tool, args);
    if ("cancelled" in outcome) {
      turn.say(namespaceTexts.cancelled(tool.title ?? tool.name));
      return;
    }
    const result = outcome.result;
    const candidates = tool.name === ns.discovery?.call ? ambiguousCandidates(result) : undefined;
    if (candidates) {
      offerCandidates(turn, candidates, addressArguments(tool, args));
      return;
    }
    const view = viewResult(ns.name, tool.name, result, tool.name === ns.askTool);
    turn.show(view.blocks);
    turn.attach(view.attachments ?? []);
    if (view.answer) {
      turn.remember("bot", view.answer.answer);
      if (view.answer.options.length > 0) {
        const { offer, replyOptions } = addOffer(
          turn.session,
          question,
          view.answer.options,
          await ns.tools(),
          turn.settings.choiceSeconds,
        );
        turn.options = replyOptions;
        turn.offerId = offer.id;
      }
    }
  } catch (err) {
    if (err instanceof MalformedAnswerError) {
      turn.log.error({ err, tool: tool.name, ref: err.ref }, "namespace returned a malformed Answer");
      turn.say(err.userText);
      return;
    }
    if (err instanceof NamespaceError) {
      turn.log.warn({ err, tool: tool.name }, "namespace call failed");
      turn.say(err.userText);
      return;
    }
    throw err;
  }
}
