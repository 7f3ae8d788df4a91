// An MCP server whose tool list grows at run time: calling grow.add registers
// grow.extra, and the SDK announces it with notifications/tools/list_changed.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "growing", version: "1.0.0" });
server.registerTool("grow.add", { description: "Adds grow.extra" }, async () => {
  server.registerTool("grow.extra", { description: "Appeared later" }, async () => ({
    content: [{ type: "text", text: "extra" }],
  }));
  return { content: [{ type: "text", text: "added" }] };
});
await server.connect(new StdioServerTransport());
