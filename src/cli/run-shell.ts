import { join } from "node:path";
import type { Config } from "../core/config.js";
import { ConfigError } from "../core/errors.js";
import { printable } from "../core/printable.js";
import { findProgram } from "../namespace/find-program.js";
import { startRuntime } from "../runtime.js";
import { shellPlatform, type ShellRoom } from "../shell/shell-platform.js";
import { cliLogger, privateStateDir } from "./paths.js";
import type { RedisConnection } from "../sessions/redis-connection.js";
import { resolveRedis } from "./redis-target.js";

/** Options of a terminal room run from the CLI. */
export interface RunShellOptions {
  config: Config;
  namespace: string;
  room?: string;
  /** Who is typing (default: the login name). */
  user?: string;
}

/**
 * Runs a terminal room with its own worker until input ends (scripted) or Ctrl-D
 * (interactive). Logs go to a file under the state folder so the terminal shows
 * only the conversation.
 */
export async function runShell(options: RunShellOptions): Promise<void> {
  const { config, namespace } = options;
  if (!config.namespaces[namespace]) {
    const known = Object.keys(config.namespaces).join(", ") || "none";
    throw new ConfigError(`namespace "${namespace}" is not configured (configured: ${known})`);
  }
  // A room whose server cannot start answers nothing: say so once and exit 1, not in every reply.
  const program = config.namespaces[namespace].command?.[0];
  if (program !== undefined && !findProgram(program, config.namespaces[namespace].cwd)) {
    throw new ConfigError(
      `namespace "${namespace}": the program ${printable(program)} is not found${program.includes("/") ? "" : " on PATH"} (install it, or give its full path in namespaces.${namespace}.command)`,
    );
  }
  const log = cliLogger();
  const redis = await resolveRedis(config, log);
  watchReachability(redis.connection, process.stderr);
  let room: ShellRoom | undefined;
  const interactive = Boolean(process.stdin.isTTY);
  const runtime = await startRuntime({
    config,
    redis: redis.connection,
    log,
    platforms: [
      shellPlatform(
        {
          name: options.room ?? namespace,
          namespace,
          input: process.stdin,
          output: process.stdout,
          interactive,
          ...(options.user ? { user: options.user } : {}),
          filesDir: join(privateStateDir("files"), (options.room ?? namespace).replace(/[^\w.-]+/g, "_")),
        },
        (r) => (room = r),
      ),
    ],
  });
  const shutdown = async () => {
    await runtime.stop();
    await redis.stop();
  };
  process.once("SIGINT", () => void shutdown().then(() => process.exit(130)));
  process.once("SIGTERM", () => void shutdown().then(() => process.exit(143)));
  await room!.finished;
  await shutdown();
  // A line that was not queued was said at once; the exit code says it to a script too.
  if (room!.failed > 0) process.exitCode = 1;
}

/**
 * Says on the terminal when Redis cannot be reached (once per outage) and when it is
 * back, instead of hanging silently.
 */
function watchReachability(connection: RedisConnection, err: NodeJS.WritableStream): void {
  const client = connection.client;
  let down = false;
  client.on("error", (e: Error) => {
    if (down) return;
    down = true;
    err.write(`roomgate: ${connection.describe()} is not reachable (${e.message}); retrying\n`);
  });
  client.on("ready", () => {
    if (!down) return;
    down = false;
    err.write(`roomgate: ${connection.describe()} is reachable again\n`);
  });
}
