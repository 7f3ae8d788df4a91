// The bullmq peer: what a Telegram bot in front of an MCP tool is usually built from
// when it must survive restarts and spread work over processes. A grammY bot (run by
// @grammyjs/runner) puts each update on a bullmq queue; a worker in a second process
// (bench/bullmq-worker.ts) takes the jobs, calls the same echo tool and replies. No
// per-room order, no session, no send limits. Started by the benchmark as a child:
// `tsx bench/bullmq-bot.ts <apiRoot> <token> <redisUrl> <queue>`.
import { run } from "@grammyjs/runner";
import { Queue } from "bullmq";
import { Bot } from "grammy";

const [apiRoot, token, redisUrl, queueName] = process.argv.slice(2);
if (!apiRoot || !token || !redisUrl || !queueName) {
  console.error("usage: bullmq-bot.ts <apiRoot> <token> <redisUrl> <queue>");
  process.exit(2);
}

const queue = new Queue(queueName, { connection: { url: redisUrl } });
const bot = new Bot(token, { client: { apiRoot } });
bot.on("message:text", async (ctx) => {
  // The update id as the job id: a redelivered update is not queued twice.
  await queue.add(
    "update",
    { chatId: ctx.chat.id, text: ctx.message.text },
    { jobId: `u${ctx.update.update_id}`, removeOnComplete: true, removeOnFail: 1000 },
  );
});
bot.catch((err) => console.error(err.message));

await bot.init();
await queue.waitUntilReady();
const runner = run(bot);
console.log("bullmq bot ready");
process.once(
  "SIGTERM",
  () =>
    void runner
      .stop()
      .then(() => queue.close())
      .then(() => process.exit(0)),
);
