import type { Config } from "../core/config.js";
import { ConfigError } from "../core/errors.js";
import { printable } from "../core/printable.js";
import { cliLogger } from "./paths.js";
import { DeadLetters, type DeadLetter } from "../scheduler/dead-letters.js";
import { SchedulerScripts } from "../scheduler/scheduler-scripts.js";
import { Keys } from "../sessions/keys.js";
import { resolveRedis } from "./redis-target.js";

/** Options of `roomgate dead-letters`. */
export interface DeadLettersOptions {
  config: Config;
  requeue?: string;
  all?: boolean;
  out?: NodeJS.WritableStream;
}

function line(letter: DeadLetter): string {
  const at = new Date(letter.at).toISOString();
  const what = letter.outcome ? "answer kept, will be delivered" : "not answered yet";
  return `${letter.id}  ${at}  ${printable(letter.room)}  attempts=${letter.attempts}  (${what})  ${printable(letter.reason)}`;
}

/**
 * Lists the turns that could not be delivered by their deadline, or re-queues one
 * (`--requeue ID`) or all (`--all`) of them into their rooms; returns the exit code.
 */
export async function runDeadLetters(options: DeadLettersOptions): Promise<number> {
  const out = options.out ?? process.stdout;
  // The terminal shows the list; what the Redis connection logs goes to the log file.
  const log = cliLogger();
  const target = await resolveRedis(options.config, log);
  const { connection } = target;
  const redis = connection.client;
  try {
    const keys = new Keys(options.config.redis.prefix, { shards: options.config.queue.shards });
    const scripts = new SchedulerScripts(redis, keys, connection.durability(log));
    const letters = new DeadLetters(redis, scripts);
    if (options.all) {
      out.write(`re-queued ${await letters.requeueAll()} dead letter(s)\n`);
      return 0;
    }
    if (options.requeue !== undefined) {
      if (!(await letters.requeue(options.requeue))) {
        throw new ConfigError(
          `no dead letter with id ${options.requeue} (\`roomgate dead-letters\` lists them)`,
        );
      }
      out.write(`re-queued ${options.requeue}\n`);
      return 0;
    }
    const list = await letters.list();
    if (list.length === 0) out.write("no dead letters\n");
    for (const letter of list) out.write(`${line(letter)}\n`);
    return 0;
  } finally {
    await target.stop();
  }
}
