import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

// A 2025-11-25 stdio server that exits when its first request is not `initialize`, as
// servers on the Rust SDK (rmcp) do: it exits on a client's revision probe
// (`server/discover`). STRICT_PID_LOG gets the process id of every start.
//   node --import tsx test/support/strict-start-server.ts

if (process.env.STRICT_PID_LOG) appendFileSync(process.env.STRICT_PID_LOG, `${process.pid}\n`);

const server = new McpServer({ name: "strict", version: "1.0.0" });
server.registerTool("strict.hello", { description: "Says hello" }, () => ({
  content: [{ type: "text", text: "hello from a strict server" }],
}));

const transport = new StdioServerTransport();
await server.connect(transport);
const handle = transport.onmessage!;
let first = true;
transport.onmessage = (message) => {
  if (first && "method" in message && "id" in message && message.method !== "initialize") process.exit(3);
  first = false;
  handle(message);
};
