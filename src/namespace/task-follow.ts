import { specTypeSchemas, type CallToolResult, type InputResponses } from "@modelcontextprotocol/client";
import { NamespaceError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { sleep } from "../core/retry.js";
import { tasksTotal } from "../ops/metrics.js";
import type { CallOptions } from "./call-options.js";
import { answerInputRequests, UnsupportedInputError, type InputRequest } from "./input-rounds.js";
import type { TaskLedger, TaskRecord } from "./task-call.js";

/** The poll interval when the server suggests none, and the bounds put on what it suggests. */
const DEFAULT_POLL_MS = 1000;
const MIN_POLL_MS = 200;
const MAX_POLL_MS = 30_000;

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** A server's suggested poll interval, kept within bounds. */
export function pollInterval(suggested: number | undefined): number {
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, suggested ?? DEFAULT_POLL_MS));
}

/** One look at a task, whichever revision it came over. */
export interface TaskSnapshot {
  status: string;
  statusMessage?: string;
  /** The server's poll interval now, when it says. */
  pollMs?: number;
  /** 2026-07-28: what an `input_required` task asks, keyed as the server keys it. */
  inputRequests?: Record<string, InputRequest>;
}

/** How a task is read, answered and cancelled on its revision's wire. */
export interface TaskWire {
  get(): Promise<TaskSnapshot>;
  /** The result of a task that ended (completed or failed). */
  result(last: TaskSnapshot): Promise<CallToolResult>;
  cancel(): Promise<void>;
  /** 2026-07-28: delivers the answers of an `input_required` task (`tasks/update`). */
  update?(responses: InputResponses): Promise<void>;
}

/** Thrown when the person cancelled a task (the server was told with tasks/cancel). */
export class TaskCancelledError extends Error {}

/** Who follows a task: the namespace and tool it belongs to, for lines and logs. */
export interface TaskOwner {
  namespace: string;
  tool: string;
  log: Logger;
}

/** Keeps a started task in the ledger (so a restarted worker follows it) and says so in progress. */
export async function recordTask(
  ledger: TaskLedger | undefined,
  options: CallOptions,
  owner: TaskOwner,
  record: TaskRecord,
): Promise<void> {
  if (ledger && options.task) await ledger.set(options.task.room, options.task.key, record);
  tasksTotal.inc({ namespace: owner.namespace, event: "started" });
  owner.log.info({ tool: owner.tool, task: record.taskId }, "tool started as an MCP task");
  options.onProgress?.({ progress: 0, message: `started (task ${record.taskId})`, status: true });
}

/** The task this call started before a restart, when the ledger has one for this tool. */
export async function resumableTask(
  ledger: TaskLedger | undefined,
  options: CallOptions,
  owner: TaskOwner,
): Promise<TaskRecord | undefined> {
  if (!ledger || !options.task) return undefined;
  const record = await ledger.get(options.task.room, options.task.key);
  if (!record || record.tool !== owner.tool) return undefined;
  tasksTotal.inc({ namespace: owner.namespace, event: "resumed" });
  owner.log.info({ tool: owner.tool, task: record.taskId }, "resuming a task started before a restart");
  options.onProgress?.({ progress: 0, message: `resumed (task ${record.taskId})`, status: true });
  return record;
}

/** Parses a task's result where it enters: a tool result, or a clear failure. */
export function toolResult(namespace: string, tool: string, raw: unknown): CallToolResult {
  const parsed = specTypeSchemas.CallToolResult["~standard"].validate(raw);
  if ("value" in parsed) return parsed.value;
  throw new NamespaceError(namespace, `the task result of ${tool} is not a tool result`, {
    userText: `The reply of ${namespace} to ${tool} was malformed; the operator has the details.`,
  });
}

/**
 * Follows a task to its end: each status change is shown as progress, the server is
 * polled at its interval, an `input_required` task's questions are asked in the room
 * (each once, however often the poll shows it) and answered with `tasks/update`, and
 * the result comes back as the call's result. An abort (the room's /cancel) cancels
 * the task at the server.
 */
export async function followTask(
  wire: TaskWire,
  record: TaskRecord,
  options: CallOptions,
  owner: TaskOwner,
): Promise<CallToolResult> {
  const { namespace, tool, log } = owner;
  const signal = options.signal ?? new AbortController().signal;
  const asked = new Set<string>();
  let pollMs = record.pollMs;
  let lastMessage: string | undefined;
  for (let polls = 1; ; polls++) {
    if (signal.aborted) {
      await wire
        .cancel()
        .catch((err: unknown) => log.warn({ err, task: record.taskId }, "tasks/cancel failed"));
      tasksTotal.inc({ namespace, event: "cancelled" });
      throw new TaskCancelledError(`task ${record.taskId} cancelled`);
    }
    const task = await wire.get();
    pollMs = task.pollMs === undefined ? pollMs : pollInterval(task.pollMs);
    const message = task.statusMessage ? `${task.status} — ${task.statusMessage}` : task.status;
    if (message !== lastMessage) {
      lastMessage = message;
      options.onProgress?.({ progress: polls, message, status: true });
    }
    if (TERMINAL.has(task.status)) return ended(wire, task, owner);
    const fresh = Object.entries(task.inputRequests ?? {}).filter(([key]) => !asked.has(key));
    if (task.status === "input_required" && wire.update && fresh.length > 0) {
      for (const [key] of fresh) asked.add(key);
      const responses = await answerInputRequests(
        Object.fromEntries(fresh),
        options,
        signal,
        (method) => new UnsupportedInputError(namespace, tool, method),
      );
      if (!signal.aborted) await wire.update(responses);
      continue;
    }
    await sleep(pollMs, signal).catch(() => undefined);
  }
}

async function ended(wire: TaskWire, task: TaskSnapshot, owner: TaskOwner): Promise<CallToolResult> {
  const { namespace } = owner;
  if (task.status === "cancelled") {
    tasksTotal.inc({ namespace, event: "cancelled" });
    return {
      isError: true,
      content: [{ type: "text", text: task.statusMessage ?? "The task was cancelled." }],
    };
  }
  const failed = task.status === "failed" ? (task.statusMessage ?? "The task failed.") : undefined;
  const result = await wire.result(task).catch((err: unknown) => {
    // A failed task may have no result to fetch: its status message is what the server said.
    if (failed === undefined) throw err;
    return { isError: true, content: [{ type: "text" as const, text: failed }] };
  });
  tasksTotal.inc({ namespace, event: result.isError ? "failed" : "completed" });
  return result;
}
