import type { CallToolResult, Client, InputResponses } from "@modelcontextprotocol/client";
import { z } from "zod";
import { NamespaceError } from "../core/errors.js";
import type { CallOptions } from "./call-options.js";
import { InputRequestSchema } from "./input-rounds.js";
import type { TaskLedger } from "./task-call.js";
import {
  followTask,
  pollInterval,
  recordTask,
  resumableTask,
  toolResult,
  type TaskOwner,
  type TaskWire,
} from "./task-follow.js";

/**
 * A task of the 2026-07-28 Tasks extension (SEP-2663) as the server shows it: the
 * handle that answers `tools/call`, and each `tasks/get`, which inlines the questions
 * of an `input_required` task and the result (or JSON-RPC error) of an ended one.
 */
export const DetailedTaskSchema = z.looseObject({
  taskId: z.string().min(1),
  status: z.string(),
  statusMessage: z.string().optional(),
  pollIntervalMs: z.number().optional(),
  inputRequests: z.record(z.string(), InputRequestSchema).optional(),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number().optional(), message: z.string().optional() }).optional(),
});
type DetailedTask = z.infer<typeof DetailedTaskSchema>;
const EmptySchema = z.looseObject({});

/** The extension's methods for one task: `tasks/get`, `tasks/update`, `tasks/cancel`. */
function extensionWire(client: Client, owner: TaskOwner, taskId: string, timeout: number): TaskWire {
  let last: DetailedTask | undefined;
  return {
    get: async () => {
      last = await client.request({ method: "tasks/get", params: { taskId } }, DetailedTaskSchema, {
        timeout,
      });
      return {
        status: last.status,
        statusMessage: last.statusMessage,
        pollMs: last.pollIntervalMs,
        inputRequests: last.inputRequests,
      };
    },
    result: async () => {
      // The result is inlined in the last tasks/get; a failed task carries its JSON-RPC error instead.
      if (last?.status === "completed") return toolResult(owner.namespace, owner.tool, last.result);
      const why = last?.statusMessage ?? last?.error?.message ?? "The task failed.";
      return { isError: true, content: [{ type: "text", text: why }] };
    },
    cancel: async () => {
      await client.request({ method: "tasks/cancel", params: { taskId } }, EmptySchema, { timeout });
    },
    update: async (inputResponses: InputResponses) => {
      await client.request({ method: "tasks/update", params: { taskId, inputResponses } }, EmptySchema, {
        timeout,
      });
    },
  };
}

/** Reads the CreateTaskResult a server answered a call with (see RoomgateMcpClient). */
export function taskHandle(namespace: string, tool: string, data: unknown): DetailedTask {
  const parsed = DetailedTaskSchema.safeParse(data);
  if (parsed.success) return parsed.data;
  throw new NamespaceError(namespace, `${tool} answered with a malformed task handle`, {
    userText: `The reply of ${namespace} to ${tool} was malformed; the operator has the details.`,
  });
}

/**
 * Follows a task the server started for a call (it answered with a task handle): the
 * task is kept in the ledger under the call's key, so a retried turn follows it instead
 * of calling again, and followed like any task until it ends.
 */
export async function followTaskHandle(
  client: Client,
  ledger: TaskLedger | undefined,
  owner: TaskOwner,
  handle: DetailedTask,
  options: CallOptions,
  timeout: number,
): Promise<CallToolResult> {
  const record = {
    taskId: handle.taskId,
    tool: owner.tool,
    startedAt: Date.now(),
    pollMs: pollInterval(handle.pollIntervalMs),
  };
  await recordTask(ledger, options, owner, record);
  return followTask(extensionWire(client, owner, record.taskId, timeout), record, options, owner);
}

/** Follows the task this call started before a restart, if the ledger has one; undefined otherwise. */
export async function resumeExtensionTask(
  client: Client,
  ledger: TaskLedger | undefined,
  owner: TaskOwner,
  options: CallOptions,
  timeout: number,
): Promise<CallToolResult | undefined> {
  const record = await resumableTask(ledger, options, owner);
  if (!record) return undefined;
  return followTask(extensionWire(client, owner, record.taskId, timeout), record, options, owner);
}
