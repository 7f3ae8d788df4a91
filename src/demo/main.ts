/**
 * Entry point: `node dist/demo/main.js` runs the demo MCP server on stdio;
 * `node dist/demo/main.js --http 8765 [--host 0.0.0.0]` serves it over Streamable HTTP.
 */
import { httpArgs, mainHttp } from "./http-server.js";
import { main } from "./server.js";

function run(): Promise<void> {
  const http = httpArgs(process.argv.slice(2));
  return http ? mainHttp(http) : main();
}

run().catch((error: unknown) => {
  console.error(`roomgate demo server: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
