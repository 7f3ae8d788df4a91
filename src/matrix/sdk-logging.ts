import "./crypto-binding.js";
import { format } from "node:util";
import { LogLevel, LogService } from "matrix-bot-sdk";
import type { Logger } from "../core/log.js";

/**
 * Sends matrix-bot-sdk's own logging (a process-wide LogService) to the pino logger
 * instead of stdout: warnings and errors at warn, the HTTP client's per-request
 * failures at debug since the adapter logs the failures that matter itself.
 */
export function routeSdkLogs(log: Logger): void {
  const child = log.child({ component: "matrix-bot-sdk" });
  const write =
    (level: "warn" | "debug") =>
    (module: string, ...parts: unknown[]): void => {
      const quiet = module === "MatrixHttpClient" || module === "DMs";
      child[quiet ? "debug" : level]({ module }, format(...parts));
    };
  const drop = (): void => undefined;
  LogService.setLogger({ info: drop, debug: drop, trace: drop, warn: write("warn"), error: write("warn") });
  LogService.setLevel(LogLevel.WARN);
}
