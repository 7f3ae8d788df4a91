import { existsSync, watch } from "node:fs";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import {
  createMcpHandler,
  McpServer,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type InputRequiredResult,
  type McpHttpHandler,
} from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
import { AnswerSchema, type Answer } from "../../../src/core/answer.js";
import { BOARD_URI, logEvent as log, note } from "./events.js";
import { askInTask, pause, serveTaskMethods, stages, startTask, TASKS, wantsTasks } from "./tasks.js";

// A real MCP server on the TypeScript SDK v2, run as a child process by the tests:
//   node --import tsx test/support/mcp-2026/server.ts
// It has what a 2026-07-28 server does differently: a router and a tool that ask back
// with `input_required` (one round, and two rounds carried by requestState), a resource
// a client follows with `subscriptions/listen`, and tools that run as tasks of the
// Tasks extension (tasks.ts). The same tools serve a 2025-11-25 client: the SDK's shim
// pushes the questions as elicitation/create, and the build runs inside its call.
//
// Environment:
//   MCP26_REVISION  "both" (default: serveStdio, 2026-07-28 and 2025-11-25 clients),
//                   "2026-07-28" (2025-11-25 clients refused), or "2025-11-25" (wired
//                   by hand to a StdioServerTransport: a 2025-11-25 server only)
//   MCP26_LOG       a file each event is appended to, one JSON line (events.ts)
//   MCP26_NOTE      a file holding the note resource's text; a change is announced
//   MCP26_STAGE_MS  how long each stage of a build or ship takes (default 300)
//   MCP26_HTTP_PORT serve Streamable HTTP on this loopback port (0: any) instead of
//                   stdio, with createMcpHandler: 2026-07-28 per request, and
//                   2025-11-25 stateless unless MCP26_REVISION=2026-07-28

const STAGE_MS = Number(process.env.MCP26_STAGE_MS ?? 300);
/** Served over HTTP (MCP26_HTTP_PORT) rather than stdio. */
const HTTP = process.env.MCP26_HTTP_PORT !== undefined;
/** Tells clients the note changed; set by how the server is served. */
let announce = (): void => undefined;
const BUILD_STAGES = ["compiling", "linking", "packaging"];

function answer(a: Answer): CallToolResult {
  return { structuredContent: a, content: [{ type: "text", text: JSON.stringify(a) }] };
}

function text(t: string, isError = false): CallToolResult {
  return { content: [{ type: "text", text: t }], ...(isError ? { isError } : {}) };
}

const Target = z.object({
  target: z.enum(["staging", "production"]).meta({ title: "Target", description: "Where the build goes" }),
});
const Channel = z.object({
  channel: z.enum(["beta", "stable"]).meta({ title: "Channel" }),
  notes: z.string().optional().meta({ title: "Release notes" }),
});
const Confirm = z.object({ confirm: z.boolean().meta({ title: "Go ahead" }) });

function build(era: "legacy" | "modern"): McpServer {
  const server = new McpServer(
    { name: "mcp-2026", version: "1.0.0", title: "Revision 2026 test server" },
    { capabilities: { resources: { subscribe: true } } },
  );
  if (era === "modern") server.server.registerCapabilities({ extensions: { [TASKS]: {} } });

  server.registerTool(
    "mt.ask",
    {
      description: "Routes a question; asks where to deploy",
      inputSchema: z.object({ question: z.string() }),
      outputSchema: AnswerSchema,
    },
    async ({ question }, ctx): Promise<CallToolResult | InputRequiredResult> => {
      log("call", { tool: "mt.ask", question, era, responses: Object.keys(ctx.mcpReq.inputResponses ?? {}) });
      if (!/deploy/i.test(question)) {
        return /help/i.test(question)
          ? answer({ ok: true, answer: 'I deploy builds: say "deploy".', items: [], options: [] })
          : answer({ ok: false, answer: 'I only deploy. Say "deploy".', items: [], options: ["deploy"] });
      }
      const target = inputResponse(ctx.mcpReq.inputResponses, "target");
      if (target.kind === "elicit") log("answered", { tool: "mt.ask", question, action: target.action });
      if (target.kind === "missing") {
        return inputRequired({
          inputRequests: {
            target: inputRequired.elicit({ message: "Deploy where?", requestedSchema: Target }),
          },
        });
      }
      const parsed =
        target.kind === "elicit" && target.action === "accept" ? Target.safeParse(target.content) : undefined;
      if (!parsed?.success) {
        return answer({
          ok: false,
          answer: "Not deployed: the question was declined.",
          items: [],
          options: [],
        });
      }
      return answer({
        ok: true,
        answer: `Deployed to ${parsed.data.target} <now> & "live".`,
        items: [{ id: "deploy-1", url: "https://example.org/deploys/1" }],
        caveat: "Rollback stays open for *one* hour.",
        options: [],
      });
    },
  );

  server.registerTool(
    "mt.release",
    {
      description: "Releases a version: asks the channel, then asks to confirm",
      inputSchema: z.object({ version: z.string().describe("The version to release") }),
      // Not destructive: the rooms run it without an approval (approvals are not what these tests are about).
      annotations: { destructiveHint: false },
    },
    async ({ version }, ctx): Promise<CallToolResult | InputRequiredResult> => {
      const state = ctx.mcpReq.requestState<string>();
      log("call", {
        tool: "mt.release",
        version,
        era,
        state: state ?? null,
        responses: Object.keys(ctx.mcpReq.inputResponses ?? {}),
      });
      if (state === undefined) {
        const channel = inputResponse(ctx.mcpReq.inputResponses, "channel");
        if (channel.kind === "missing") {
          return inputRequired({
            inputRequests: {
              channel: inputRequired.elicit({
                message: `Release ${version}: which channel?`,
                requestedSchema: Channel,
              }),
            },
          });
        }
        const picked =
          channel.kind === "elicit" && channel.action === "accept"
            ? Channel.safeParse(channel.content)
            : undefined;
        if (!picked?.success) return text(`Release of ${version} called off.`, true);
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Release ${version} to ${picked.data.channel}?`,
              requestedSchema: Confirm,
            }),
          },
          // Unsigned: a test server; a real one seals it (createRequestStateCodec).
          requestState: JSON.stringify(picked.data),
        });
      }
      const picked = Channel.parse(JSON.parse(state));
      const confirm = inputResponse(ctx.mcpReq.inputResponses, "confirm");
      const ok =
        confirm.kind === "elicit" &&
        confirm.action === "accept" &&
        Confirm.safeParse(confirm.content).data?.confirm;
      if (!ok) return text(`Release of ${version} called off.`, true);
      const notes = picked.notes ? ` (${picked.notes})` : "";
      return text(`Released ${version} to ${picked.channel}${notes}.`);
    },
  );

  server.registerTool(
    "mt.build",
    {
      description: "Builds the project; runs as a task when the client takes tasks",
      inputSchema: z.object({ target: z.string().optional() }),
      // Not destructive: the rooms run it without an approval (approvals are not what these tests are about).
      annotations: { destructiveHint: false },
    },
    async ({ target }, ctx) => {
      const asTask = wantsTasks(ctx);
      log("call", { tool: "mt.build", era, asTask });
      const done = text(`build of ${target ?? "main"} ready: 42 files`);
      // A "slow" build leaves a test ample time to stop it, on a busy machine too.
      const stageMs = target === "slow" ? STAGE_MS * 10 : STAGE_MS;
      if (asTask) {
        return startTask("mt.build", async (task) => {
          await stages(task, BUILD_STAGES, stageMs);
          return done;
        });
      }
      // Without tasks the same stages run inside the call, as progress notifications.
      const token = ctx.mcpReq._meta?.progressToken;
      const signal = ctx.mcpReq.signal;
      for (const [i, name] of BUILD_STAGES.entries()) {
        if (signal.aborted) break;
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: { progressToken: token, progress: i + 1, total: BUILD_STAGES.length, message: name },
          });
        }
        await pause(stageMs, signal);
      }
      if (signal.aborted) {
        log("call-cancelled", { tool: "mt.build" });
        return text("build cancelled", true);
      }
      return done;
    },
  );

  server.registerTool(
    "mt.ship",
    {
      description: "Ships the build; runs as a task that asks before it ships",
      inputSchema: z.object({}),
      // Not destructive: the rooms run it without an approval (approvals are not what these tests are about).
      annotations: { destructiveHint: false },
    },
    async (_args, ctx) => {
      log("call", { tool: "mt.ship", era, asTask: wantsTasks(ctx) });
      if (!wantsTasks(ctx)) return text("mt.ship runs only as a task", true);
      return startTask("mt.ship", async (task) => {
        await stages(task, ["checking"]);
        const responses = await askInTask(task, {
          sign: inputRequired.elicit({
            message: "Sign the release?",
            requestedSchema: z.object({ sign: z.boolean() }),
          }),
        });
        const sign = responses.sign as { action?: string; content?: { sign?: unknown } } | undefined;
        const signed = sign?.action === "accept" && sign.content?.sign === true;
        await stages(task, ["uploading"]);
        return text(signed ? "shipped, signed" : "shipped, unsigned");
      });
    },
  );

  server.registerTool(
    "mt.paint",
    {
      description: "Paints a picture; asks the client's model for one (sampling), which rooms do not offer",
      inputSchema: z.object({}),
      // Not read-only (check calls those) and not destructive (rooms run it without an approval).
      annotations: { destructiveHint: false },
    },
    async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
      log("call", { tool: "mt.paint", era, responses: Object.keys(ctx.mcpReq.inputResponses ?? {}) });
      if (inputResponse(ctx.mcpReq.inputResponses, "picture").kind === "missing") {
        return inputRequired({
          inputRequests: {
            picture: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: "Paint a cat" } }],
              maxTokens: 50,
            }),
          },
        });
      }
      return text("painted");
    },
  );

  server.registerTool(
    "mt.status",
    {
      description: "Reads the board",
      inputSchema: z.object({}),
      annotations: { readOnlyHint: true },
    },
    () => text(note()),
  );

  server.registerResource("board", BOARD_URI, { mimeType: "text/plain" }, () => ({
    contents: [{ uri: BOARD_URI, mimeType: "text/plain", text: note() }],
  }));

  if (era === "modern") serveTaskMethods(server);
  const subscribed = new Set<string>();
  if (era === "legacy") {
    server.server.setRequestHandler("resources/subscribe", (request) => {
      subscribed.add(request.params.uri);
      log("subscribe", { uri: request.params.uri, era });
      return {};
    });
    server.server.setRequestHandler("resources/unsubscribe", (request) => {
      subscribed.delete(request.params.uri);
      return {};
    });
  }

  // Over stdio one instance serves the connection: it announces the note's changes
  // (on 2026-07-28 the entry delivers them on the listen streams that asked for the uri).
  if (!HTTP) {
    announce = () => {
      if (era !== "modern" && !subscribed.has(BOARD_URI)) return;
      log("updated", { uri: BOARD_URI, era });
      server.server
        .sendResourceUpdated({ uri: BOARD_URI })
        .catch((err: Error) => log("error", { message: err.message }));
    };
  }
  log("serving", { era });
  return server;
}

/** Announces each change of the note file (one write can fire the watcher twice: once is announced). */
function watchNote(): void {
  const file = process.env.MCP26_NOTE;
  if (!file || !existsSync(file)) return;
  let announced = note();
  watch(file, () => {
    const now = note();
    if (now === announced || now === "") return;
    announced = now;
    announce();
  });
}

/** Serves the handler over HTTP on loopback; says `listening <port>` on stderr once it does. */
function serveHttp(handler: McpHttpHandler): void {
  const http = createServer((req, res) => {
    // A closed response is the 2026-07-28 way to cancel a request over HTTP.
    const closed = new AbortController();
    res.on("close", () => closed.abort());
    const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      body:
        req.method === "GET" || req.method === "HEAD" ? undefined : (Readable.toWeb(req) as ReadableStream),
      duplex: "half",
      signal: closed.signal,
    } as RequestInit);
    void handler.fetch(request).then(
      (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        if (response.body) Readable.fromWeb(response.body as NodeReadableStream).pipe(res);
        else res.end();
      },
      (err: Error) => {
        log("error", { message: err.message });
        res.writeHead(500).end();
      },
    );
  });
  http.listen(Number(process.env.MCP26_HTTP_PORT), "127.0.0.1", () => {
    const address = http.address();
    console.error(`listening ${typeof address === "object" && address ? address.port : 0}`);
  });
}

const revision = process.env.MCP26_REVISION ?? "both";
log("started", { revision });
watchNote();
if (HTTP) {
  // One fresh instance per request; a change is published to every open listen stream.
  const handler = createMcpHandler(({ era }) => build(era), {
    legacy: revision === "2026-07-28" ? "reject" : "stateless",
    onerror: (err) => log("error", { message: err.message }),
  });
  announce = () => {
    log("updated", { uri: BOARD_URI, era: "modern" });
    handler.notify.resourceUpdated(BOARD_URI);
  };
  serveHttp(handler);
} else if (revision === "2025-11-25") {
  await build("legacy").connect(new StdioServerTransport());
} else {
  serveStdio(({ era }) => build(era), {
    legacy: revision === "2026-07-28" ? "reject" : "serve",
    onerror: (err) => log("error", { message: err.message }),
  });
}
