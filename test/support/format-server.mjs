// A stdio MCP server whose one tool uses JSON Schema formats ("uri", and one no
// library knows), to check that validators' warnings never reach a room.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "formats", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "fmt.fetch",
      description: "Fetches a page",
      // Reads only: without the hint MCP counts a tool destructive, and a room asks first.
      annotations: { readOnlyHint: true },
      inputSchema: {
        type: "object",
        properties: {
          url: { type: "string", format: "uri" },
          tag: { type: "string", format: "x-house-style" },
        },
        required: ["url"],
      },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => ({
  content: [{ type: "text", text: `fetched ${req.params.arguments?.url}` }],
}));
await server.connect(new StdioServerTransport());
