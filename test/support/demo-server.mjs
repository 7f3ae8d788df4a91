// The demo MCP server run from source (src/demo/main.ts through tsx), so tests that
// start it as a namespace child need no dist/ build: `[process.execPath, DEMO_SERVER]`.
import { register } from "tsx/esm/api";

register();
await import("../../src/demo/main.ts");
