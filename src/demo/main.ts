/** Entry point: `node dist/demo/main.js` runs the demo MCP server on stdio. */
import { main } from "./server.js";

main().catch((error: unknown) => {
  console.error(`roomgate demo server: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
