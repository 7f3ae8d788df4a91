// The bullmq peer's worker (see bench/bullmq-bot.ts): takes the bot's jobs, calls the
// echo tool of its own MCP child and replies through the Bot API, `concurrency` jobs
// at a time (roomgate's default worker concurrency). Started by the benchmark:
// `tsx bench/bullmq-worker.ts <apiRoot> <token> <redisUrl> <queue> <concurrency>`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { Worker } from "bullmq";
import { Api } from "grammy";
import { AnswerSchema } from "../src/core/answer.js";
import { echoNamespace } from "./support/roomgate-fleet.js";

const [apiRoot, token, redisUrl, queueName, concurrency] = process.argv.slice(2);
if (!apiRoot || !token || !redisUrl || !queueName || !concurrency) {
  console.error("usage: bullmq-worker.ts <apiRoot> <token> <redisUrl> <queue> <concurrency>");
  process.exit(2);
}

const ns = echoNamespace() as { command: string[]; cwd: string };
const mcp = new Client({ name: "bullmq-worker", version: "1.0.0" });
await mcp.connect(
  new StdioClientTransport({ command: ns.command[0]!, args: ns.command.slice(1), cwd: ns.cwd }),
);
const api = new Api(token, { apiRoot });

const worker = new Worker<{ chatId: number; text: string }>(
  queueName,
  async (job) => {
    const result = await mcp.request(
      { method: "tools/call", params: { name: "echo.ask", arguments: { question: job.data.text } } },
      CallToolResultSchema,
    );
    await api.sendMessage(job.data.chatId, AnswerSchema.parse(result.structuredContent).answer);
  },
  { connection: { url: redisUrl, maxRetriesPerRequest: null }, concurrency: Number(concurrency) },
);
worker.on("failed", (job, err) => console.error(`job ${job?.id} failed: ${err.message}`));
await worker.waitUntilReady();
console.log("bullmq worker ready");
process.once("SIGTERM", () => void worker.close().then(() => process.exit(0)));
