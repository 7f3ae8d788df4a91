import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { HTTP_LIMIT_DEFAULTS } from "../core/config/process.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Logger } from "../core/log.js";
import type { StuckPart } from "../core/part.js";
import { healthStatus } from "./health-status.js";
import { registry } from "./metrics.js";

/** The health and metrics endpoint of a process. */
export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/** How often request deadlines are checked. */
const CHECK_CONNECTIONS_MS = 1_000;

/** How long /healthz waits for Redis before calling it down: the answer comes within a second. */
const REDIS_PING_MS = 800;

/** A further route of the server: handles the request and returns true, or returns false when the path is not its own. */
export type HttpRoute = (req: IncomingMessage, res: ServerResponse, path: string) => boolean;

/** A part of the process that health reports on: true when up. */
export type HealthCheck = () => boolean | Promise<boolean>;

async function pingWithin(redis: RedisClient, ms: number): Promise<boolean> {
  // ioredis queues commands while it reconnects: the ping is raced against a timer.
  if (redis.status === "end") return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([
      redis.ping().then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Serves `GET /healthz` (200 when every part is up; 503 naming what is down and, in
 * `stuck`, which part cannot work and why, within a second even when Redis does not
 * answer; `status: "degraded"` with the parts that do not work while the rest runs,
 * such as a bot whose token was refused) and `GET /metrics` (Prometheus text).
 */
export async function startHealthServer(options: {
  host: string;
  port: number;
  redis: RedisClient;
  log: Logger;
  /** Further parts to report, by name (e.g. the worker's dispatch loops). */
  checks?: Record<string, HealthCheck>;
  /** The process's parts that are stuck now, each with its reason. */
  stuck?: () => StuckPart[];
  /** Further routes (the webhooks), each handling its own paths; tried before the 404. */
  routes?: HttpRoute[];
  /** Longest a client may take to send its headers, and its whole request (`http.*TimeoutSeconds`). */
  headersTimeoutSeconds?: number;
  requestTimeoutSeconds?: number;
  /** Most connections open at once (`http.maxConnections`). */
  maxConnections?: number;
}): Promise<HealthServer> {
  const health = async (): Promise<Record<string, "up" | "down">> => {
    const parts: Record<string, "up" | "down"> = {
      redis: (await pingWithin(options.redis, REDIS_PING_MS)) ? "up" : "down",
    };
    for (const [name, check] of Object.entries(options.checks ?? {})) {
      parts[name] = (await Promise.resolve(check()).catch(() => false)) ? "up" : "down";
    }
    return parts;
  };
  const requestTimeout = (options.requestTimeoutSeconds ?? HTTP_LIMIT_DEFAULTS.requestTimeoutSeconds) * 1000;
  // A stranger decides how slowly it sends: each request has a deadline for its headers
  // and one for the whole of it, checked every second (Node's default is every 30 s).
  const limits = {
    headersTimeout: Math.min(
      (options.headersTimeoutSeconds ?? HTTP_LIMIT_DEFAULTS.headersTimeoutSeconds) * 1000,
      requestTimeout,
    ),
    requestTimeout,
    connectionsCheckingInterval: CHECK_CONNECTIONS_MS,
  };
  const server: Server = createServer(limits, (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/healthz") {
      void health().then((parts) => {
        const stuck = options.stuck?.() ?? [];
        const down = [
          ...new Set([...Object.keys(parts).filter((k) => parts[k] === "down"), ...stuck.map((s) => s.part)]),
        ];
        // Degraded is still 200: the rest of the process works, and a restart would not fix a bad token.
        const degraded = healthStatus.degraded();
        const status = degraded.length > 0 ? { status: "degraded", degraded } : { status: "ok" };
        res.writeHead(down.length === 0 ? 200 : 503, { "content-type": "application/json" }).end(
          JSON.stringify({
            ok: down.length === 0,
            ...parts,
            ...(down.length ? { down } : {}),
            ...(stuck.length ? { stuck } : {}),
            ...status,
          }),
        );
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
    for (const route of options.routes ?? []) if (route(req, res, path ?? "/")) return;
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  server.maxConnections = options.maxConnections ?? HTTP_LIMIT_DEFAULTS.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  options.log.info({ host: options.host, port }, "health and metrics listening");
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
