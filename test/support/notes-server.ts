import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AnswerSchema } from "../../src/core/answer.js";

/** The resource the notes server serves and announces updates of. */
export const NOTE_URI = "note://status";

/**
 * A real MCP server over stateful Streamable HTTP (one McpServer per session) with a
 * resource clients can subscribe to, a router, and a task tool whose tasks live in one
 * store shared by all sessions, so a roomgate that restarts (a new session) can still
 * poll the task it started. It runs in the test process; roomgate reaches it over HTTP.
 */
export interface NotesServer {
  url: string;
  /** Sets the note and tells every subscribed session it changed. */
  setNote(text: string): Promise<void>;
  /** Tells subscribers the note changed without changing it (a repeated notification). */
  touch(): Promise<void>;
  /** Sessions subscribed to the note now. */
  subscribers(): number;
  /** Every task the server created, with its current status. */
  tasks(): Promise<{ taskId: string; status: string; stage: number }[]>;
  close(): Promise<void>;
}

const STAGES = ["collecting", "counting", "writing"];

/** Starts the notes server; each task runs `stageMs` per stage. */
export async function startNotesServer(options: { stageMs: number }): Promise<NotesServer> {
  let note = "nothing yet";
  const shared = new InMemoryTaskStore();
  // The store without sessions: a task outlives the session (the roomgate process) that made it.
  const store: TaskStore = {
    createTask: (params, requestId, request) => shared.createTask(params, requestId, request),
    getTask: (taskId) => shared.getTask(taskId),
    storeTaskResult: (taskId, status, result) => shared.storeTaskResult(taskId, status, result),
    getTaskResult: (taskId) => shared.getTaskResult(taskId),
    updateTaskStatus: (taskId, status, message) => shared.updateTaskStatus(taskId, status, message),
    listTasks: (cursor) => shared.listTasks(cursor),
  };
  const created: { taskId: string; stage: number }[] = [];
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const subscribed = new Set<McpServer>();

  const build = (): McpServer => {
    const server = new McpServer(
      { name: "notes", version: "1.0.0" },
      {
        capabilities: {
          resources: { subscribe: true },
          tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
        },
        taskStore: store,
      },
    );
    server.registerResource("status", NOTE_URI, { mimeType: "text/plain" }, () => ({
      contents: [{ uri: NOTE_URI, mimeType: "text/plain", text: note }],
    }));
    server.server.setRequestHandler(SubscribeRequestSchema, () => {
      subscribed.add(server);
      return {};
    });
    server.server.setRequestHandler(UnsubscribeRequestSchema, () => {
      subscribed.delete(server);
      return {};
    });
    server.registerTool(
      "notes.ask",
      {
        description: "Routes a question about notes",
        inputSchema: { question: z.string() },
        outputSchema: AnswerSchema.shape,
      },
      ({ question }) => {
        const answer = /report/i.test(question)
          ? { ok: true, answer: "A report takes a while. Run it?", items: [], options: ["notes.report"] }
          : { ok: true, answer: `asked: ${question.split("\n").join(" | ")}`, items: [], options: [] };
        return { structuredContent: answer, content: [{ type: "text", text: JSON.stringify(answer) }] };
      },
    );
    server.experimental.tasks.registerToolTask(
      "notes.report",
      {
        title: "Notes report",
        description: "Writes a report about the notes; runs as a task",
        inputSchema: { question: z.string().optional() },
        annotations: { readOnlyHint: true },
        execution: { taskSupport: "required" },
      },
      {
        createTask: async ({ question }, extra) => {
          const task = await extra.taskStore.createTask({ ttl: 600_000, pollInterval: 250 });
          const record = { taskId: task.taskId, stage: 0 };
          created.push(record);
          void (async () => {
            for (let i = 0; i < STAGES.length; i++) {
              const now = await store.getTask(task.taskId);
              if (!now || now.status === "cancelled") return;
              record.stage = i + 1;
              await store.updateTaskStatus(
                task.taskId,
                "working",
                `${STAGES[i]} (${i + 1}/${STAGES.length})`,
              );
              await new Promise((r) => setTimeout(r, options.stageMs));
            }
            const now = await store.getTask(task.taskId);
            if (!now || now.status === "cancelled") return;
            await store.storeTaskResult(task.taskId, "completed", {
              content: [{ type: "text", text: `report done: ${question ?? "(no question)"}` }],
            });
          })();
          return { task };
        },
        getTask: async (_args, extra) => (await store.getTask(extra.taskId))!,
        getTaskResult: async (_args, extra) =>
          (await store.getTaskResult(extra.taskId)) as { content: { type: "text"; text: string }[] },
      },
    );
    return server;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const id = req.headers["mcp-session-id"];
    const existing = typeof id === "string" ? sessions.get(id) : undefined;
    if (existing) return existing.transport.handleRequest(req, res);
    if (req.method !== "POST") return void res.writeHead(400).end();
    const server = build();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, { transport, server }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      subscribed.delete(server);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const notify = async () => {
    for (const server of subscribed) {
      await server.server.sendResourceUpdated({ uri: NOTE_URI }).catch(() => subscribed.delete(server));
    }
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async setNote(text) {
      note = text;
      await notify();
    },
    touch: notify,
    subscribers: () => subscribed.size,
    tasks: () =>
      Promise.all(
        created.map(async (t) => ({ ...t, status: (await store.getTask(t.taskId))?.status ?? "gone" })),
      ),
    async close() {
      for (const { transport } of sessions.values()) await transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
