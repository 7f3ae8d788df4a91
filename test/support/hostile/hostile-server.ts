// A hostile MCP namespace "adv" for tests: its router answers each case of
// hostile-answers.ts, returns malformed Answers, error results, crashes mid-call
// and sleeps; every tools/call is logged (HOSTILE_CALL_LOG) so tests count calls
// at the server itself.
import { appendFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { answerJsonSchema } from "../../../src/core/answer.js";
import { echoAnswer, HOSTILE_ANSWERS, HOSTILE_ERROR_TEXT } from "./hostile-answers.js";

const callLog = process.env.HOSTILE_CALL_LOG;
const server = new Server({ name: "hostile", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "adv.ask",
      description: "A router that misbehaves on purpose",
      inputSchema: {
        type: "object",
        properties: {
          question: { type: "string" },
          user_id: { type: "string" },
          session_id: { type: "string" },
        },
        required: ["question"],
      },
      outputSchema: answerJsonSchema(),
    },
    {
      name: "adv.who",
      description: "Says who asked",
      // Reads only: without the hint MCP counts a tool destructive, and a room asks first.
      annotations: { readOnlyHint: true },
      inputSchema: {
        type: "object",
        properties: { user_id: { type: "string" }, session_id: { type: "string" } },
      },
    },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  if (callLog) appendFileSync(callLog, `${request.params.name}\t${JSON.stringify(args)}\n`);
  if (request.params.name === "adv.who") {
    return {
      content: [{ type: "text", text: `user=${String(args.user_id)} session=${String(args.session_id)}` }],
    };
  }
  const question = String(args.question ?? "");
  const answer = HOSTILE_ANSWERS[question];
  const text = (value: unknown) => [{ type: "text" as const, text: JSON.stringify(value) }];
  switch (question) {
    case "malformed":
      return { content: text({ ok: "yes" }), structuredContent: { ok: "yes", answer: 7, items: "none" } };
    case "error":
      return { isError: true, content: [{ type: "text", text: HOSTILE_ERROR_TEXT }] };
    case "crash":
      setTimeout(() => process.exit(3), 20);
      await sleep(10_000);
      return { content: [] };
    case "slow":
      await sleep(Number(process.env.HOSTILE_SLOW_MS ?? 1500));
      break;
  }
  const result = answer ?? echoAnswer(question);
  return { content: text(result), structuredContent: result };
});

await server.connect(new StdioServerTransport());
