import type { Config, ConfigIssue } from "../core/config.js";
import { ConfigError } from "../core/errors.js";
import { createLogger } from "../core/log.js";
import { matrixPlatform } from "../matrix/matrix-platform.js";
import { startRuntime, type PlatformFactory } from "../runtime.js";
import { telegramPlatform } from "../telegram/telegram-platform.js";
import { resolveRedis } from "./redis-target.js";

/**
 * Runs the configured platforms until SIGTERM/SIGINT: `start` receives and works,
 * `worker` only works (receivers: false), so any number of worker processes can
 * share the load through Redis; `start --receive-only` (workers: false) leaves every
 * turn to them, the shape of a bot that only enqueues in front of a job queue.
 */
export async function runService(options: {
  config: Config;
  receivers: boolean;
  workers: boolean;
  warnings?: ConfigIssue[];
}): Promise<void> {
  const { config } = options;
  const log = createLogger();

  const platforms: PlatformFactory[] = [];
  if ((config.telegram?.bots.length ?? 0) > 0) platforms.push(telegramPlatform);
  if (config.matrix) platforms.push(matrixPlatform);
  if (platforms.length === 0) {
    throw new ConfigError(
      "nothing to run: the configuration has no telegram.bots and no matrix section (for a terminal room use `roomgate shell`)",
    );
  }
  for (const warning of options.warnings ?? [])
    log.warn({ path: warning.path }, `config: ${warning.message}`);
  // Listened for before anything starts: a SIGTERM during start-up still drains, never kills.
  const stopRequested = new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
  const redis = await resolveRedis(config, log, { requirePersistence: true });
  let runtime;
  try {
    runtime = await startRuntime({
      config,
      redis: redis.connection,
      log,
      receivers: options.receivers,
      workers: options.workers,
      platforms,
      // A process that runs no turn calls no namespace: its children would only idle.
      connectNamespaces: options.workers,
    });
  } catch (err) {
    // Nothing outlives a failed start: the embedded redis-server goes too.
    await redis.stop();
    throw err;
  }
  log.info(
    {
      receivers: options.receivers,
      workers: options.workers,
      telegramBots: config.telegram?.bots.length ?? 0,
      matrixRooms: config.matrix?.rooms.length ?? 0,
    },
    options.receivers ? "roomgate started" : "roomgate worker started",
  );
  if (!options.workers)
    log.info("receiving only: turns wait in Redis for `roomgate worker` processes to run them");
  await stopRequested;
  // A second signal means "now": rooms still held are taken over when their leases run out.
  const now = () => {
    log.warn("second signal; exiting at once");
    process.exit(143);
  };
  process.once("SIGINT", now);
  process.once("SIGTERM", now);
  const graceMs = config.shutdown.graceSeconds * 1000;
  log.info({ graceMs }, "shutting down: finishing running turns");
  const started = Date.now();
  await runtime.stop(graceMs);
  await redis.stop();
  log.info({ ms: Date.now() - started }, "stopped");
}
