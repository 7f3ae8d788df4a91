// The flooding namespace "h" over stdio: `h.flood` answers with one stdout line of
// FLOOD_BYTES characters, the way an SDK server writes any reply.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { floodServer } from "./flood-tools.js";

const bytes = Number(process.env.FLOOD_BYTES ?? 30_000_000);
await floodServer(() => "x".repeat(bytes)).connect(new StdioServerTransport());
