import { randomUUID } from "node:crypto";
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type McpServer,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { logEvent as log } from "./events.js";

// The Tasks extension of MCP 2026-07-28 (io.modelcontextprotocol/tasks, SEP-2663) on
// the receiving side, by hand: the SDK v2 has no receiver for it. A tool answers with
// a task handle (resultType "task") when the client declared the extension; the
// client follows it with tasks/get, answers its questions with tasks/update and may
// cancel it with tasks/cancel.

/** The extension's identifier, in capabilities on both sides. */
export const TASKS = "io.modelcontextprotocol/tasks";
const STAGE_MS = Number(process.env.MCP26_STAGE_MS ?? 300);

/** One task and what it holds. */
export interface TaskState {
  taskId: string;
  tool: string;
  status: "working" | "input_required" | "completed" | "cancelled" | "failed";
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  result?: CallToolResult;
  inputRequests?: Record<string, unknown>;
  /** Set by tasks/update: the answers to the outstanding input requests. */
  answered?: (responses: Record<string, unknown>) => void;
}

const tasks = new Map<string, TaskState>();

/** True when the request's client declared the Tasks extension. */
export function wantsTasks(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown> } | undefined;
  return caps?.extensions?.[TASKS] !== undefined;
}

function touch(task: TaskState, change: Partial<TaskState>): void {
  Object.assign(task, change, { lastUpdatedAt: new Date().toISOString() });
  log("task-status", { taskId: task.taskId, status: task.status, statusMessage: task.statusMessage });
}

function taskView(task: TaskState): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: 600_000,
    pollIntervalMs: 100,
    ...(task.status === "completed" ? { result: task.result } : {}),
    ...(task.status === "input_required" ? { inputRequests: task.inputRequests } : {}),
  };
}

/** Starts a task that runs `work` in the background; the tool call is answered with its handle. */
export function startTask(tool: string, work: (task: TaskState) => Promise<CallToolResult>): CallToolResult {
  const now = new Date().toISOString();
  const task: TaskState = {
    taskId: randomUUID(),
    tool,
    status: "working",
    statusMessage: "queued",
    createdAt: now,
    lastUpdatedAt: now,
  };
  tasks.set(task.taskId, task);
  log("task-created", { taskId: task.taskId, tool });
  void work(task).then(
    (result) => {
      if (task.status !== "cancelled") touch(task, { status: "completed", statusMessage: "done", result });
    },
    () => undefined,
  );
  // A CreateTaskResult in place of the tool result: resultType "task" passes the SDK's stamp untouched.
  return { resultType: "task", ...taskView(task) } as unknown as CallToolResult;
}

/** Waits `ms` (a stage of work), or until `signal` aborts. */
export const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/** Runs named stages of `ms` each, one status message each; false once the task was cancelled. */
export async function stages(task: TaskState, names: string[], ms = STAGE_MS): Promise<boolean> {
  for (const [i, name] of names.entries()) {
    if (task.status === "cancelled") return false;
    touch(task, { status: "working", statusMessage: `${name} (${i + 1}/${names.length})` });
    await pause(ms);
  }
  return task.status !== "cancelled";
}

/** Waits in input_required until tasks/update answers every request. */
export function askInTask(
  task: TaskState,
  requests: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    touch(task, {
      status: "input_required",
      statusMessage: "waiting for an answer",
      inputRequests: requests,
    });
    task.answered = (responses) => {
      task.answered = undefined;
      task.inputRequests = undefined;
      touch(task, { status: "working", statusMessage: "answered" });
      resolve(responses);
    };
  });
}

const TaskIdParams = z.object({ taskId: z.string() }).passthrough();

function known(taskId: string): TaskState {
  const task = tasks.get(taskId);
  if (!task)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Failed to retrieve task: Task not found");
  return task;
}

/** Serves tasks/get, tasks/update and tasks/cancel on a 2026-07-28 instance. */
export function serveTaskMethods(server: McpServer): void {
  server.server.setRequestHandler("tasks/get", { params: TaskIdParams }, ({ taskId }) => {
    log("tasks/get", { taskId });
    return taskView(known(taskId));
  });
  // The SDK lifts inputResponses out of the params of every request, tasks/update's too.
  server.server.setRequestHandler("tasks/update", { params: TaskIdParams }, ({ taskId }, ctx) => {
    const responses = ctx.mcpReq.inputResponses ?? {};
    log("tasks/update", { taskId, keys: Object.keys(responses), responses });
    known(taskId).answered?.(responses);
    return {};
  });
  server.server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, ({ taskId }) => {
    const task = known(taskId);
    log("tasks/cancel", { taskId });
    if (task.status === "working" || task.status === "input_required") {
      touch(task, { status: "cancelled", statusMessage: "cancelled by the client" });
    }
    return {};
  });
}
