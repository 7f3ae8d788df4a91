import type { CallToolResult } from "@modelcontextprotocol/client";
import type { InboundEvent } from "../core/event.js";
import type { CallProgress } from "../namespace/call-options.js";
import type { ToolInfo } from "../namespace/tool-info.js";
import { isCancel } from "./commands/cancel.js";
import { elicit } from "./elicitation.js";
import { TakenEvents } from "./taken.js";
import type { TurnContext } from "./turn-context.js";
import type { AskedOf } from "../sessions/session.js";
import { personOf } from "./access.js";
import { pause } from "../core/retry.js";

/**
 * How long a call runs before it watches the room for a /cancel: a quick call (most
 * are) costs no subscription and no read; the first read then finds a /cancel sent
 * meanwhile.
 */
const WATCH_AFTER_MS = 250;

/** How the person ended a running call: `/cancel`, or Stop on its progress. */
export type CancelledBy = "cancel" | "stop";

/**
 * A call's outcome: its result, that the person cancelled or stopped it, or how it
 * failed; with the queued events it took out of band on the way, whatever the outcome.
 */
export type CallOutcome = { taken: TakenEvents } & (
  { result: CallToolResult } | { cancelled: CancelledBy } | { failed: unknown }
);

/** The status line of a running call. */
export function progressText(tool: string, p: CallProgress): string {
  if (p.status) return `⏳ ${tool}: ${p.message ?? ""}`;
  const count = p.total
    ? `${p.progress}/${p.total} (${Math.round((100 * p.progress) / p.total)}%)`
    : `${p.progress}`;
  return `⏳ ${tool}: ${count}${p.message ? ` — ${p.message}` : ""}`;
}

/**
 * Calls a tool with what MCP offers while it runs (DESIGN §6a): a progressToken
 * whose notifications update one status message, elicitation requests asked in the
 * room, and a /cancel from the room or a Stop of its progress (taken out of band, since
 * they queue behind this turn) that aborts the call, which makes the SDK send
 * notifications/cancelled (a task: tasks/cancel); a result that comes back later is
 * dropped. The questions, the /cancel and the Stop are the `owner`'s: the person whose
 * call it is.
 */
export async function runCall(
  turn: TurnContext,
  tool: ToolInfo,
  args: Record<string, unknown>,
  owner: AskedOf = personOf(turn.event),
): Promise<CallOutcome> {
  const ns = turn.namespace;
  const taken = new TakenEvents(turn.session.taken);
  const label = tool.title ?? tool.name;
  const controller = new AbortController();
  const key = `${turn.event.eventId}:${tool.name}`;
  let shown = false;
  let lastProgress = Promise.resolve();
  const done = new AbortController();
  const watching = watchForCancel(turn, taken, controller, done.signal, owner).catch((err: unknown) =>
    // The call runs on without a way to cancel it rather than fail for its watch.
    turn.log.warn({ err }, "could not watch the room for a /cancel"),
  );
  try {
    const result = await ns.call(tool.name, args, {
      signal: controller.signal,
      onProgress: (p) => {
        shown = true;
        lastProgress = lastProgress.then(() =>
          turn.channel.progress({ key, text: progressText(label, p), done: false }),
        );
      },
      onElicit: (params, signal) =>
        elicit(turn, taken, params, AbortSignal.any([signal, controller.signal]), owner),
      // A task tool keeps its task id under this key: the same when this turn is retried.
      task: { room: turn.event.room, key },
    });
    return { result, taken };
  } catch (err) {
    if (controller.signal.aborted) return { cancelled: cancelledBy(controller.signal), taken };
    return { failed: err, taken };
  } finally {
    // A reason given: abort() without one builds a DOMException, a cost on every call.
    done.abort(CALL_ENDED);
    await watching;
    await lastProgress;
    if (shown) {
      const how = controller.signal.aborted ? cancelledBy(controller.signal) : undefined;
      const text = how ? `✗ ${label}: ${how === "stop" ? "stopped" : "cancelled"}` : `✓ ${label}: finished`;
      await turn.channel.progress({ key, text, done: true });
    }
  }
}

function cancelledBy(signal: AbortSignal): CancelledBy {
  return signal.reason === "stop" ? "stop" : "cancel";
}

/** Why the cancel watch of a call stops: the call ended. */
const CALL_ENDED = "call ended";

/** How a queued event ends this turn's call: its owner's /cancel, or their Stop of its progress. */
function endsCall(turn: TurnContext, event: InboundEvent): CancelledBy | undefined {
  if (event.kind === "message" && isCancel(event.text)) return "cancel";
  const ref = turn.channel.progressRef;
  if (event.kind === "stop" && ref !== undefined && event.progress === ref) return "stop";
  return undefined;
}

/** Aborts the call when its owner's /cancel or Stop is queued behind the turn (other events stay queued). */
async function watchForCancel(
  turn: TurnContext,
  taken: TakenEvents,
  controller: AbortController,
  stop: AbortSignal,
  owner: AskedOf,
): Promise<void> {
  await pause(WATCH_AFTER_MS, stop);
  if (stop.aborted) return;
  const queued = await turn.channel.watch("turn");
  try {
    for (let event = await queued.next(stop); event; event = await queued.next(stop)) {
      // Only the person whose call it is cancels it, if the bindings still admit them.
      const theirs = event.sender.id === owner.id && turn.access.admits(event);
      const how = theirs && !taken.has(event) ? endsCall(turn, event) : undefined;
      if (how) {
        taken.take(event);
        controller.abort(how);
        return;
      }
      // Other events stay queued for their own turns; an elicitation reads them itself.
    }
  } finally {
    queued.close();
  }
}
