import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RedisClient } from "../sessions/redis-connection.js";
import { durableWrite, type Durability } from "../sessions/durable-write.js";
import type { HookConfig } from "../core/config/proactive.js";
import type { Logger } from "../core/log.js";
import type { HttpRoute } from "../ops/health-server.js";
import { hookDeliveriesTotal } from "../ops/metrics.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisRateLimiter } from "../sessions/rate-limiter.js";
import { checkHookSignature, HOOK_WINDOW_MS } from "./hook-signature.js";
import { renderHookAsk } from "./hook-template.js";
import type { ProactiveInbox } from "./proactive-inbox.js";

/** A configured hook with the namespace its room is bound to. */
export interface BoundHook {
  config: HookConfig;
  namespace: string;
}

const DELIVERY_ID = /^[\x21-\x7e]{1,200}$/;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(reason);
  }
}

/**
 * `POST /hooks/<name>`: a signed delivery becomes one proactive turn in the hook's room.
 * `202` only once the event is in Redis; `401` (missing or bad signature, stale
 * timestamp), `404` (unknown hook), `413` (body over `maxBodyBytes`), `429` (over
 * `perMinute`), `409` (the same signature again under another delivery id) and `422`
 * (the question the template makes of the body is empty) queue nothing. A repeated `X-Roomgate-Delivery` gets `200` and is not queued again.
 */
export function hookRoute(deps: {
  hooks: BoundHook[];
  inbox: ProactiveInbox;
  limiter: RedisRateLimiter;
  redis: RedisClient;
  /** How the replay record waits for replicas before a 202. */
  durability: Durability;
  keys: Keys;
  log: Logger;
}): HttpRoute {
  const byName = new Map(deps.hooks.map((h) => [h.config.name, h]));
  return (req, res, path) => {
    const match = /^\/hooks\/([^/]+)$/.exec(path);
    if (!match) return false;
    let name = match[1]!;
    try {
      name = decodeURIComponent(name);
    } catch {
      // Not a name any hook has; answered as unknown below.
    }
    void deliver(req, name).then(
      (body) => reply(res, 202, name, "accepted", body),
      (err: unknown) => {
        if (err instanceof Refusal) {
          const body = err.status === 200 ? { accepted: true, duplicate: true } : { error: err.reason };
          reply(res, err.status, name, err.reason, body, err.headers);
          if (err.status === 413) req.destroy();
          return;
        }
        deps.log.error({ err, hook: name }, "webhook delivery could not be queued");
        reply(res, 503, name, "unavailable", { error: "unavailable" }, { "retry-after": "5" });
      },
    );
    return true;
  };

  async function deliver(req: IncomingMessage, name: string): Promise<Record<string, unknown>> {
    if (req.method !== "POST") throw new Refusal(405, "method", { allow: "POST" });
    const hook = byName.get(name);
    if (!hook) throw new Refusal(404, "unknown_hook");
    const { config } = hook;
    const body = await readCapped(req, config.maxBodyBytes);
    const timestamp = header(req, "x-roomgate-timestamp");
    const signature = header(req, "x-roomgate-signature");
    const problem = checkHookSignature(config.secret, timestamp, signature, body, Date.now());
    if (problem) throw new Refusal(401, problem === "missing" ? "bad_signature" : problem);
    const text = renderHookAsk(config.ask, body.toString("utf8"));
    if (text.trim() === "") throw new Refusal(422, "empty_ask");
    const wait = await deps.limiter.tryAcquire([
      { key: deps.keys.rate(`hook:${name}`, "deliveries"), max: config.perMinute, windowMs: 60_000 },
    ]);
    if (wait > 0) throw new Refusal(429, "rate", { "retry-after": String(Math.ceil(wait / 1000)) });
    const signatureHash = createHash("sha256").update(signature!).digest("hex");
    const given = header(req, "x-roomgate-delivery");
    if (given !== undefined && !DELIVERY_ID.test(given)) throw new Refusal(400, "bad_delivery_id");
    // Without a delivery id, the signature names the delivery: a replay of it is the same one.
    const delivery = given ?? signatureHash.slice(0, 32);
    await guardReplay(name, signatureHash, delivery);
    const result = await deps.inbox.put({
      eventId: `hook:${name}:${delivery}`,
      room: config.room,
      namespace: hook.namespace,
      source: { type: "hook", name, at: Date.now() },
      text,
    });
    if (result === "duplicate") throw new Refusal(200, "duplicate");
    return { accepted: true, delivery, ...(result === "held" ? { held: true } : {}) };
  }

  /**
   * The signature covers the timestamp and body, not the delivery id, so a captured
   * request could be sent again under a new id within the timestamp window: each
   * signature is remembered with its delivery id for longer than that window.
   */
  async function guardReplay(name: string, signatureHash: string, delivery: string): Promise<void> {
    const key = deps.keys.hookSignature(name, signatureHash);
    // Replicated before the 202, as the event is: a failover must not forget which id the signature had.
    const [set, first] = await durableWrite(deps.redis, deps.durability, key, [
      ["set", key, delivery, "PX", 2 * HOOK_WINDOW_MS + 60_000, "NX"],
      ["get", key],
    ]);
    if (set !== "OK" && first !== null && first !== delivery) throw new Refusal(409, "replayed");
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Reads the body up to `max` bytes; the declared length is not trusted, the bytes are counted. */
async function readCapped(req: IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) throw new Refusal(413, "too_large");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new Refusal(413, "too_large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function reply(
  res: ServerResponse,
  status: number,
  hook: string,
  reason: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  // An unknown name is not a label: a scan of random paths must not grow the metric set.
  hookDeliveriesTotal.inc({ hook: reason === "unknown_hook" ? "" : hook, status: String(status), reason });
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", connection: "close", ...headers });
  res.end(JSON.stringify(body));
}
