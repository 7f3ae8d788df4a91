import { specTypeSchemas, type CallToolResult, type Client } from "@modelcontextprotocol/client";
import { z } from "zod";
import type { CallOptions } from "./call-options.js";
import {
  followTask,
  pollInterval,
  recordTask,
  resumableTask,
  type TaskOwner,
  type TaskWire,
} from "./task-follow.js";
import type { ToolInfo } from "./tool-info.js";

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

/** How long roomgate asks the server to keep a task's result: long enough to outlive a restart. */
const TASK_TTL_MS = 24 * 3600_000;

/** A 2025-11-25 task as `tools/call` (with `task`) and `tasks/get` return it, parsed where it enters. */
const LegacyTaskSchema = z.looseObject({
  taskId: z.string().min(1),
  status: z.string(),
  statusMessage: z.string().optional(),
  pollInterval: z.number().optional(),
});
const CreateLegacyTaskSchema = z.looseObject({ task: LegacyTaskSchema });
const EmptySchema = z.looseObject({});

/** Whether a tool runs as a 2025-11-25 task here: it says it can, and the server offers tasks for tool calls. */
export function runsAsTask(client: Client, tool: ToolInfo | undefined): boolean {
  const support = tool?.execution?.taskSupport;
  if (support !== "required" && support !== "optional") return false;
  return client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
}

/** The 2025-11-25 task methods: `tasks/get`, `tasks/result`, `tasks/cancel`. */
function legacyWire(client: Client, taskId: string, timeout: number): TaskWire {
  return {
    get: async () => {
      const task = await client.request({ method: "tasks/get", params: { taskId } }, LegacyTaskSchema, {
        timeout,
      });
      return { status: task.status, statusMessage: task.statusMessage, pollMs: task.pollInterval };
    },
    result: () =>
      client.request({ method: "tasks/result", params: { taskId } }, specTypeSchemas.CallToolResult, {
        timeout,
      }),
    cancel: async () => {
      await client.request({ method: "tasks/cancel", params: { taskId } }, EmptySchema, { timeout });
    },
  };
}

/**
 * Calls a tool as a 2025-11-25 MCP task (`tools/call` with `task`), or picks up the
 * task this call already started before a restart: the task id is kept in Redis under
 * the call's key, status changes are shown as progress, `tasks/get` is polled at the
 * server's interval, and the result comes from `tasks/result`. An abort (the room's
 * /cancel) sends `tasks/cancel`.
 */
export async function callAsTask(
  client: Client,
  ledger: TaskLedger,
  owner: TaskOwner,
  args: Record<string, unknown>,
  options: CallOptions,
  timeout: number,
): Promise<CallToolResult> {
  let record = await resumableTask(ledger, options, owner);
  if (!record) {
    const created = await client.request(
      { method: "tools/call", params: { name: owner.tool, arguments: args, task: { ttl: TASK_TTL_MS } } },
      CreateLegacyTaskSchema,
      { timeout, signal: options.signal },
    );
    record = {
      taskId: created.task.taskId,
      tool: owner.tool,
      startedAt: Date.now(),
      pollMs: pollInterval(created.task.pollInterval),
    };
    await recordTask(ledger, options, owner, record);
  }
  return followTask(legacyWire(client, record.taskId, timeout), record, options, owner);
}
