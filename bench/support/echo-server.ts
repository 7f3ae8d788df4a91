// The echo namespace the benchmark and the fault script drive: `echo.ask` answers
// with the question itself as a valid Answer, so a recorder can check which message
// a reply belongs to. Words in the question make it misbehave on purpose:
//   crash      the process exits while answering (a poison message: it crashes every time)
//   crash-once the process exits, unless the marker folder (ECHO_MARKERS) already holds
//              this question's marker: the retried call on the restarted child answers
//   hang       the process spins forever, answering nothing (not even pings)
//   sleep:<ms> the answer waits that long
// ECHO_PID_LOG appends the process id at start-up, so a test can count restarts;
// ECHO_CALL_LOG appends each question as its call arrives, so a test knows it is in flight.
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AnswerSchema, type Answer } from "../../src/core/answer.js";

const markers = process.env.ECHO_MARKERS;
if (process.env.ECHO_PID_LOG) appendFileSync(process.env.ECHO_PID_LOG, `${process.pid}\n`);

async function misbehave(text: string): Promise<void> {
  if (process.env.ECHO_CALL_LOG) appendFileSync(process.env.ECHO_CALL_LOG, `${text}\n`);
  if (/\bcrash-once\b/.test(text) && markers) {
    const marker = join(markers, createHash("sha256").update(text).digest("hex").slice(0, 16));
    if (!existsSync(marker)) {
      writeFileSync(marker, "");
      process.exit(3);
    }
  } else if (/\bcrash\b/.test(text)) {
    process.exit(3);
  }
  if (/\bhang\b/.test(text)) {
    for (;;) {
      // A hung server: the event loop never turns again.
    }
  }
  const slow = /\bsleep:(\d+)\b/.exec(text);
  if (slow) await sleep(Number(slow[1]));
}

function answer(text: string): CallToolResult {
  const reply: Answer = { ok: true, answer: `echo: ${text}`, items: [], caveat: null, options: [] };
  return { content: [{ type: "text", text: JSON.stringify(reply) }], structuredContent: reply };
}

const server = new McpServer({ name: "echo", version: "1.0.0" });
const question = { question: z.string() };

server.registerTool(
  "echo.ask",
  { description: "Echoes the question as an Answer", inputSchema: question, outputSchema: AnswerSchema },
  async ({ question: text }) => {
    await misbehave(text);
    return answer(text);
  },
);
server.registerTool(
  "echo.lookup",
  {
    description: "Echoes the question; reads nothing, changes nothing",
    inputSchema: question,
    annotations: { readOnlyHint: true },
  },
  async ({ question: text }) => {
    await misbehave(text);
    return { content: [{ type: "text", text: `lookup: ${text}` }] };
  },
);
server.registerTool(
  "echo.write",
  { description: "Echoes the question, as if it had changed something", inputSchema: question },
  async ({ question: text }) => {
    await misbehave(text);
    return { content: [{ type: "text", text: `write: ${text}` }] };
  },
);

await server.connect(new StdioServerTransport());
