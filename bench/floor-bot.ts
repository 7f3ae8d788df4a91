// The benchmark's floor: the least a Telegram bot in front of an MCP tool can do.
// Per update it calls the same echo tool inline and replies with the answer line;
// no queue, no session, no limits, no durability. Started by the benchmark as a
// child process: `tsx bench/floor-bot.ts <apiRoot> <token> polling|runner`.
import { run } from "@grammyjs/runner";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { Bot } from "grammy";
import { AnswerSchema } from "../src/core/answer.js";
import { echoNamespace } from "./support/roomgate-fleet.js";

const [apiRoot, token, mode] = process.argv.slice(2);
if (!apiRoot || !token || (mode !== "polling" && mode !== "runner")) {
  console.error("usage: floor-bot.ts <apiRoot> <token> polling|runner");
  process.exit(2);
}

const ns = echoNamespace() as { command: string[]; cwd: string };
const mcp = new Client({ name: "floor", version: "1.0.0" });
await mcp.connect(
  new StdioClientTransport({ command: ns.command[0]!, args: ns.command.slice(1), cwd: ns.cwd }),
);

const bot = new Bot(token, { client: { apiRoot } });
bot.on("message:text", async (ctx) => {
  const result = await mcp.request(
    { method: "tools/call", params: { name: "echo.ask", arguments: { question: ctx.message.text } } },
    CallToolResultSchema,
  );
  await ctx.reply(AnswerSchema.parse(result.structuredContent).answer);
});
bot.catch((err) => console.error(err.message));

await bot.init();
if (mode === "runner") {
  const runner = run(bot);
  console.log("floor ready");
  process.once("SIGTERM", () => void runner.stop().then(() => process.exit(0)));
} else {
  process.once("SIGTERM", () => void bot.stop().then(() => process.exit(0)));
  void bot.start({ onStart: () => console.log("floor ready") });
}
