import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { answerJsonSchema } from "../../../src/core/answer.js";

/**
 * The tools of the flooding namespace "h": a router that answers `pong: <question>`
 * and `h.flood`, whose reply is far larger than any cap (how it is sent depends on
 * the transport: a streamed HTTP body or one long stdout line).
 */
export function floodServer(flood: () => string): Server {
  const server = new Server({ name: "flood", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: "h.ask",
        description: "Answers pong",
        inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
        outputSchema: answerJsonSchema(),
      },
      {
        name: "h.flood",
        description: "Replies with far too much",
        annotations: { readOnlyHint: true },
        inputSchema: { type: "object", properties: { mode: { type: "string", enum: ["json", "sse"] } } },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    if (request.params.name === "h.flood") return { content: [{ type: "text", text: flood() }] };
    const answer = {
      ok: true,
      answer: `pong: ${String(request.params.arguments?.question)}`,
      items: [],
      options: [],
    };
    return { content: [{ type: "text", text: JSON.stringify(answer) }], structuredContent: answer };
  });
  return server;
}
