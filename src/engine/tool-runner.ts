import { interruptsTurn, MalformedAnswerError, NamespaceError } from "../core/errors.js";
import { isDestructive, type ToolInfo } from "../namespace/tool-info.js";
import { callArguments } from "../sessions/audit-log.js";
import type { AskedOf } from "../sessions/session.js";
import { scopeRefusalsTotal } from "../ops/metrics.js";
import { fillArguments, validateArguments } from "./arguments.js";
import { asked, askerOf, personOf, toThemAlone } from "./access.js";
import { askApproval, needsApproval } from "./approvals.js";
import { runCall, type CallOutcome } from "./call-runner.js";
import { attach, offer, remember, say, setSlot, show, type Change } from "./changes.js";
import { failWith } from "./composer.js";
import { addressArguments, ambiguousCandidates, offerCandidates } from "./discovery.js";
import { newOffer } from "./offers.js";
import { namespaceTexts } from "./namespace-texts.js";
import { texts } from "./texts.js";
import { viewResult } from "./tool-result.js";
import type { TurnContext } from "./turn-context.js";

/** How a tool came to be called: from a question, a chosen option or an explicit /call. */
export interface RunOptions {
  question?: string;
  explicit?: Record<string, unknown>;
}

/** The tools a room may call right now: the router and tools tool, plus what was enabled. */
export function isEnabled(ctx: TurnContext, tool: string): boolean {
  const ns = ctx.namespace;
  const d = ns.discovery;
  // A namespace found by address works through its discovery tools from the start.
  const discovery = d !== undefined && (tool === d.search || tool === d.describe || tool === d.call);
  return tool === ns.askTool || tool === ns.toolsTool || discovery || ctx.session.enabled.includes(tool);
}

/**
 * Calls one tool of the room's namespace: checks scope right before the call, fills
 * and validates arguments (asking for missing ones), shows the result verbatim and
 * turns an Answer's options into an offer.
 */
export async function runTool(
  ctx: TurnContext,
  toolName: string,
  options: RunOptions = {},
): Promise<Change[]> {
  const ns = ctx.namespace;
  const tools = await ns.tools();
  const tool = tools.find((t) => t.name === toolName);
  if (!tool) {
    // A tool outside the room's namespace does not exist for this room (DESIGN §6).
    scopeRefusalsTotal.inc({ namespace: ns.name, reason: "not_in_namespace" });
    return [say(texts.notInNamespace(toolName, ns.name))];
  }
  if (!isEnabled(ctx, toolName)) {
    scopeRefusalsTotal.inc({ namespace: ns.name, reason: "not_enabled" });
    return [say(texts.notEnabled(toolName))];
  }
  const { args, missing } = fillArguments(
    tool.inputSchema,
    {
      question: options.question,
      userId: ctx.event.sender.id,
      conversationId: ctx.session.conversationId,
      history: [...ctx.history],
    },
    options.explicit,
  );
  if (missing.length > 0) {
    const first = missing[0]!;
    return [
      setSlot(ctx.event.sender.id, {
        tool: toolName,
        args,
        missing,
        question: options.question ?? "",
        createdAt: Date.now(),
        ...asked(ctx.event),
      }),
      say(texts.askForArgument(tool.title ?? toolName, first.name, first.description, first.type)),
      ...toThemAlone(ctx.access, askerOf(ctx.event)),
    ];
  }
  return callChecked(ctx, tool, args, options.question ?? "");
}

/** The approval a held call ran on: its id, who approved it, who asked. */
export interface Approved {
  id: string;
  approvedBy: string[];
  requester?: AskedOf;
}

/** Calls a tool found by address (discovery) through the usual checks, as `callChecked` does. */
export function checkedCall(turn: TurnContext) {
  return (tool: ToolInfo, args: Record<string, unknown>, question: string) =>
    callChecked(turn, tool, args, question);
}

/** Validates and calls a tool whose arguments are complete. */
export async function callChecked(
  ctx: TurnContext,
  tool: ToolInfo,
  args: Record<string, unknown>,
  question: string,
  approved?: Approved,
): Promise<Change[]> {
  const ns = ctx.namespace;
  const problem = validateArguments(tool.inputSchema, args);
  if (problem) return [say(texts.invalidArguments(tool.name, problem))];
  if (tool.execution?.taskSupport === "required" && !ns.runsTasks) {
    return [say(namespaceTexts.taskRequired(tool.name))];
  }
  // The last of the three scope checks: nothing outside the namespace and enabled set is sent.
  if (!tool.name.startsWith(ns.prefix) || !isEnabled(ctx, tool.name)) {
    scopeRefusalsTotal.inc({ namespace: ns.name, reason: "not_in_namespace" });
    return [say(texts.notInNamespace(tool.name, ns.name))];
  }
  if (!approved && needsApproval(ctx, tool)) return askApproval(ctx, tool, args, question);
  const call = await runCall(ctx, tool, args, approved?.requester ?? personOf(ctx.event));
  // The router is never destructive by contract, whatever its annotations say.
  if (approved || (tool.name !== ns.askTool && isDestructive(tool))) {
    await recordCall(ctx, tool, args, call, approved);
  }
  // What the call took out of band is recorded whatever became of the call.
  const taken = call.taken.changes();
  if ("failed" in call) return [...taken, ...namespaceFailed(ctx, tool, call.failed, taken)];
  if ("cancelled" in call) {
    const line =
      call.cancelled === "stop" ? namespaceTexts.stopped : namespaceTexts.cancelled(tool.title ?? tool.name);
    return [...taken, say(line)];
  }
  // Built up in order, so that a failure part-way keeps what was already shown.
  const done: Change[] = [...taken];
  try {
    const result = call.result;
    const candidates = tool.name === ns.discovery?.call ? ambiguousCandidates(result) : undefined;
    if (candidates) return [...done, ...offerCandidates(ctx, candidates, addressArguments(tool, args))];
    const view = viewResult(ns.name, tool.name, result, tool.name === ns.askTool);
    done.push(show(view.blocks), attach(view.attachments ?? []));
    if (!view.answer) return done;
    done.push(remember("bot", view.answer.answer));
    if (view.answer.options.length === 0) return done;
    // The options are the asker's to choose: after an approval, the requester's, not the approver's.
    const askedOf = approved?.requester ? { askedOf: approved.requester } : asked(ctx.event);
    const options = newOffer(
      question,
      view.answer.options,
      await ns.tools(),
      ctx.settings.choiceSeconds,
      askedOf,
    );
    return [...done, offer(options)];
  } catch (err) {
    return [...done, ...namespaceFailed(ctx, tool, err, done)];
  }
}

/** Every destructive call made goes to the trail: who asked, who approved, its arguments' hash, how it ended. */
async function recordCall(
  ctx: TurnContext,
  tool: ToolInfo,
  args: Record<string, unknown>,
  call: CallOutcome,
  approved: Approved | undefined,
): Promise<void> {
  const outcome =
    "failed" in call ? "failed" : "cancelled" in call ? "cancelled" : call.result.isError ? "error" : "ok";
  await ctx.access.record({
    type: "call.destructive",
    at: Date.now(),
    binding: ctx.access.binding?.name ?? ctx.event.room,
    room: ctx.event.room,
    requester: approved?.requester?.id ?? ctx.event.sender.id,
    by: ctx.event.sender.id,
    tool: tool.name,
    ...callArguments(args, ctx.access.binding?.auditArguments ?? true),
    ...(approved ? { approval: approved.id, approvedBy: approved.approvedBy } : {}),
    outcome,
  });
}

/** A namespace's failure as the person's line (logged with its ref); anything else fails the turn. */
function namespaceFailed(
  ctx: TurnContext,
  tool: ToolInfo,
  err: unknown,
  before: readonly Change[],
): Change[] {
  if (err instanceof MalformedAnswerError) {
    ctx.log.error({ err, tool: tool.name, ref: err.ref }, "namespace returned a malformed Answer");
    return [say(err.userText)];
  }
  if (interruptsTurn(err)) throw err;
  if (err instanceof NamespaceError) {
    ctx.log.warn({ err, tool: tool.name }, "namespace call failed");
    return [say(err.userText)];
  }
  return failWith(before, err);
}
