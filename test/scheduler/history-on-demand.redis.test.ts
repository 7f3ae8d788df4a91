import { createServer, type Server } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AnswerSchema } from "../../src/core/answer.js";
import { ConfigSchema } from "../../src/core/config.js";
import { startSpine, type Spine } from "../support/spine.js";

/** A namespace whose router takes the conversation's history and says what it got. */
function historyServer(): McpServer {
  const server = new McpServer({ name: "hist", version: "1.0.0" });
  server.registerTool(
    "hist.ask",
    {
      description: "Echoes the history it was given",
      inputSchema: { question: z.string(), history: z.string().optional() },
      outputSchema: AnswerSchema,
    },
    ({ history }) => {
      const answer = {
        ok: true,
        answer: `history: ${history ?? "(none)"}`,
        items: [],
        caveat: null,
        options: [],
      };
      return { content: [{ type: "text", text: answer.answer }], structuredContent: answer };
    },
  );
  return server;
}

describe("the history is read for namespaces whose tools take it", () => {
  let http: Server;
  let spine: Spine;
  beforeAll(async () => {
    http = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        const server = historyServer();
        res.on("close", () => void server.close());
        const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
        void server.connect(transport).then(() => transport.handleRequest(req, res, body));
      });
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const port = (http.address() as { port: number }).port;
    const config = ConfigSchema.parse({ namespaces: { hist: { url: `http://127.0.0.1:${port}/mcp` } } });
    spine = await startSpine({ namespace: "hist", config });
  });
  afterAll(async () => {
    await spine.stop();
    await new Promise((resolve) => http.close(resolve));
  });

  it("hands the earlier turns to a tool that takes `history`, in the same room, across turns in a row", async () => {
    expect((await spine.rooms.ask("h", "first question")).text).toContain("history: (none)");
    const second = await spine.rooms.ask("h", "second question");
    expect(second.text).toContain("user: first question");
    // Two at once: the second runs straight after the first, with the history the finish returned.
    const a = await spine.rooms.say("h", "third question");
    const b = await spine.rooms.say("h", "fourth question");
    await spine.rooms.reply(a);
    expect((await spine.rooms.reply(b)).text).toContain("user: third question");
  });
});
