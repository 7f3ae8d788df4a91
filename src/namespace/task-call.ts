import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Logger } from "../core/log.js";
import { tasksTotal } from "../ops/metrics.js";
import type { CallOptions } from "./call-options.js";
import type { ToolInfo } from "./tool-info.js";
import { sleep } from "../core/retry.js";

/** What is kept of a started task, so that a restarted worker polls it instead of starting another. */
export const TaskRecordSchema = z.object({
  taskId: z.string().min(1),
  tool: z.string(),
  startedAt: z.number(),
  pollMs: z.number().int().positive(),
});
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** Where started tasks are kept (Redis), by the room and the call that started them. */
export interface TaskLedger {
  get(room: string, callKey: string): Promise<TaskRecord | undefined>;
  set(room: string, callKey: string, record: TaskRecord): Promise<void>;
}

/** The poll interval when the server suggests none, and the bounds put on what it suggests. */
const DEFAULT_POLL_MS = 1000;
const MIN_POLL_MS = 200;
const MAX_POLL_MS = 30_000;
/** How long roomgate asks the server to keep a task's result: long enough to outlive a restart. */
const TASK_TTL_MS = 24 * 3600_000;

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** Whether a tool runs as an MCP task here: it says it can, and the server offers tasks for tool calls. */
export function runsAsTask(client: Client, tool: ToolInfo | undefined): boolean {
  const support = tool?.execution?.taskSupport;
  if (support !== "required" && support !== "optional") return false;
  return client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
}

/** Thrown when the person cancelled a task (the server was told with tasks/cancel). */
export class TaskCancelledError extends Error {}

/**
 * Calls a tool as an MCP task (`tools/call` with `task`), or picks up the task this
 * call already started before a restart: the task id is kept in Redis under the
 * call's key, status changes are shown as progress, `tasks/get` is polled at the
 * server's interval, and the result comes from `tasks/result`. An abort (the room's
 * /cancel) sends `tasks/cancel`.
 */
export async function callAsTask(
  client: Client,
  ledger: TaskLedger,
  namespace: string,
  tool: string,
  args: Record<string, unknown>,
  options: CallOptions & { task: NonNullable<CallOptions["task"]> },
  timeout: number,
  log: Logger,
): Promise<CallToolResult> {
  const { room, key } = options.task;
  const signal = options.signal;
  let record = await ledger.get(room, key);
  if (record && record.tool === tool) {
    tasksTotal.inc({ namespace, event: "resumed" });
    log.info({ tool, task: record.taskId }, "resuming a task started before a restart");
    options.onProgress?.({ progress: 0, message: `resumed (task ${record.taskId})`, status: true });
  } else {
    const created = await client.request(
      { method: "tools/call", params: { name: tool, arguments: args } },
      CreateTaskResultSchema,
      { timeout, signal, task: { ttl: TASK_TTL_MS } },
    );
    const pollMs = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, created.task.pollInterval ?? DEFAULT_POLL_MS));
    record = { taskId: created.task.taskId, tool, startedAt: Date.now(), pollMs };
    await ledger.set(room, key, record);
    tasksTotal.inc({ namespace, event: "started" });
    log.info({ tool, task: record.taskId }, "tool started as an MCP task");
    options.onProgress?.({ progress: 0, message: `started (task ${record.taskId})`, status: true });
  }
  const taskId = record.taskId;
  let lastMessage: string | undefined;
  let failed: string | undefined;
  for (let polls = 1; ; polls++) {
    if (signal?.aborted) {
      await client.experimental.tasks.cancelTask(taskId, { timeout }).catch((err: unknown) => {
        log.warn({ err, task: taskId }, "tasks/cancel failed");
      });
      tasksTotal.inc({ namespace, event: "cancelled" });
      throw new TaskCancelledError(`task ${taskId} cancelled`);
    }
    const task = await client.experimental.tasks.getTask(taskId, { timeout });
    const message = task.statusMessage ? `${task.status} — ${task.statusMessage}` : task.status;
    if (message !== lastMessage) {
      lastMessage = message;
      options.onProgress?.({ progress: polls, message, status: true });
    }
    if (TERMINAL.has(task.status)) {
      if (task.status === "cancelled") {
        tasksTotal.inc({ namespace, event: "cancelled" });
        return {
          isError: true,
          content: [{ type: "text", text: task.statusMessage ?? "The task was cancelled." }],
        };
      }
      if (task.status === "failed") failed = task.statusMessage ?? "The task failed.";
      break;
    }
    await sleep(record.pollMs, signal).catch(() => undefined);
  }
  const result = await client.experimental.tasks
    .getTaskResult(taskId, CallToolResultSchema, { timeout })
    .catch((err: unknown) => {
      // A failed task may have no result to fetch: its status message is what the server said.
      if (failed === undefined) throw err;
      return { isError: true, content: [{ type: "text" as const, text: failed }] };
    });
  tasksTotal.inc({ namespace, event: result.isError ? "failed" : "completed" });
  return result;
}
