import { createServer, type Server } from "node:http";
import type { Redis } from "ioredis";
import type { Logger } from "../core/log.js";
import { healthStatus } from "./health-status.js";
import { registry } from "./metrics.js";

/** The health and metrics endpoint of a process. */
export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /healthz` (200 when Redis answers, 503 otherwise; `status: "degraded"`
 * with the parts that do not work, such as a bot whose token was refused) and
 * `GET /metrics` (Prometheus text) on the given address.
 */
export async function startHealthServer(options: {
  host: string;
  port: number;
  redis: Redis;
  log: Logger;
}): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/healthz") {
      options.redis
        .ping()
        .then(() => {
          // Degraded is still 200: the rest of the process works, and a restart would not fix a bad token.
          const degraded = healthStatus.degraded();
          const status = degraded.length > 0 ? { status: "degraded", degraded } : { status: "ok" };
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ ok: true, redis: "up", ...status }));
        })
        .catch(() => {
          res
            .writeHead(503, { "content-type": "application/json" })
            .end(JSON.stringify({ ok: false, redis: "down" }));
        });
      return;
    }
    if (req.method === "GET" && path === "/metrics") {
      registry
        .metrics()
        .then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text))
        .catch((err: unknown) => {
          options.log.error({ err }, "metrics collection failed");
          res.writeHead(500).end();
        });
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  options.log.info({ host: options.host, port }, "health and metrics listening");
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
