import "../../matrix/crypto-binding.js";
import { MatrixClient } from "matrix-bot-sdk";
import type { Config, MatrixConfig } from "../../core/config.js";
import { ConfigError } from "../../core/errors.js";
import { createLogger, registerSecret, type Logger } from "../../core/log.js";
import type { HomeserverCall } from "../../matrix/crypto/outgoing-requests.js";
import { withMatrixRetry } from "../../matrix/matrix-retry.js";
import { routeSdkLogs } from "../../matrix/sdk-logging.js";
import { Keys } from "../../sessions/keys.js";
import type { RedisClient } from "../../sessions/redis-connection.js";
import { resolveRedis } from "../redis-target.js";

/** What every `roomgate matrix …` command works with: the bot account, its homeserver and the deployment's Redis. */
export interface MatrixCliContext {
  config: Config;
  matrix: MatrixConfig;
  userId: string;
  deviceId: string;
  call: HomeserverCall;
  redis: RedisClient;
  keys: Keys;
  log: Logger;
}

/** The configuration's matrix section, or a clear error. */
export function matrixSection(config: Config): MatrixConfig {
  if (!config.matrix) throw new ConfigError("the configuration has no matrix section");
  return config.matrix;
}

/**
 * Runs `work` as the bot account of the configuration, with the Redis the deployment
 * uses (a running start's embedded one included). Logs go to stderr: stdout is what the
 * operator reads.
 */
export async function withMatrixCli<T>(
  config: Config,
  work: (ctx: MatrixCliContext) => Promise<T>,
): Promise<T> {
  const matrix = matrixSection(config);
  for (const secret of [matrix.accessToken, matrix.storeKey, matrix.password, matrix.recoveryKey]) {
    registerSecret(secret);
  }
  const log = createLogger({ level: "warn", destination: 2 });
  routeSdkLogs(log);
  const api = new MatrixClient(matrix.homeserver, matrix.accessToken);
  const call: HomeserverCall = (method, path, body) =>
    withMatrixRetry(
      `${method} ${path.split("/").slice(3, 5).join("/")}`,
      () => api.doRequest(method, path, null, body),
      log,
    );
  const who = await withMatrixRetry("whoami", () => api.getWhoAmI(), log);
  const target = await resolveRedis(config, log, { shared: true });
  try {
    return await work({
      config,
      matrix,
      userId: who.user_id,
      deviceId: who.device_id ?? "",
      call,
      redis: target.connection.client,
      keys: new Keys(config.redis.prefix, { shards: config.queue.shards }),
      log,
    });
  } finally {
    await target.stop();
  }
}

/** A key in groups of four, as people compare keys aloud. */
export function grouped(key: string): string {
  return (key.match(/.{1,4}/g) ?? []).join(" ");
}
