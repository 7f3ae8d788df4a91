import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RedisClient } from "../sessions/redis-connection.js";
import { durableWrite, type Durability } from "../scheduler/durable-write.js";
import type { HookConfig } from "../core/config/proactive.js";
import type { Logger } from "../core/log.js";
import type { HttpRoute } from "../ops/health-server.js";
import { hookDeliveriesTotal } from "../ops/metrics.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisRateLimiter } from "../scheduler/rate-limiter.js";
import { checkHookSignature, HOOK_WINDOW_MS } from "./hook-signature.js";
import { HookTemplateTooDeepError, renderHookAsk } from "./hook-template.js";
import type { ProactiveInbox } from "./proactive-inbox.js";
import { FailedAttempts, MinuteLog } from "./stranger-limits.js";

/** A configured hook with the namespace its room is bound to. */
export interface BoundHook {
  config: HookConfig;
  namespace: string;
}

const DELIVERY_ID = /^[\x21-\x7e]{1,200}$/;
/** How much of an unknown hook's body is read before the 401, as a known hook's would be (its default `maxBodyBytes`). */
const UNKNOWN_HOOK_BODY_BYTES = 64 * 1024;
/** What a replay record holds once its delivery was accepted: a resend is a duplicate before any budget is used. */
const ACCEPTED = "\naccepted";

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly headers: Record<string, string> = {},
    /** What the sender is told, when it must not learn the reason (an unknown hook looks like a bad signature). */
    readonly shown = reason,
  ) {
    super(reason);
  }
}

/** Refusals that count as a failed attempt of the source: a wrong or missing signature, or a hook that does not exist. */
const FAILED_ATTEMPTS = new Set(["bad_signature", "unknown_hook"]);

/**
 * `POST /hooks/<name>`: a signed delivery becomes one proactive turn in the hook's room.
 * `202` only once the event is in Redis; `401` (missing or bad signature, stale
 * timestamp, or a hook that does not exist: a stranger cannot tell the two apart),
 * `400` (a body cut off or unreadable), `413` (body over `maxBodyBytes`), `429` (over
 * `perMinute`, or a source over `badSignaturesPerMinute` failed attempts), `409` (the
 * same signature again under another delivery id) and `422` (the question the template
 * makes of the body is empty, or a field nested too deep) queue nothing. A repeated
 * `X-Roomgate-Delivery` gets `200` and is not queued again. Nothing a stranger sends
 * becomes a metric label or a log line of its own.
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
  /** Failed signature attempts one source address may make per minute (`proactive.badSignaturesPerMinute`). */
  badSignaturesPerMinute: number;
}): HttpRoute {
  const byName = new Map(deps.hooks.map((h) => [h.config.name, h]));
  const failures = new FailedAttempts(deps.badSignaturesPerMinute);
  const unreadable = new MinuteLog(deps.log, "webhook bodies cut off or unreadable (400)");
  return (req, res, path) => {
    const match = /^\/hooks\/([^/]+)$/.exec(path);
    if (!match) return false;
    let name = match[1]!;
    try {
      name = decodeURIComponent(name);
    } catch {
      // Not a name any hook has; answered as unknown below.
    }
    // A name that is not configured is never a label: a scan of random paths adds no series.
    const label = byName.has(name) ? name : "";
    const source = req.socket.remoteAddress ?? "";
    void deliver(req, name, source).then(
      (body) => reply(res, 202, label, "accepted", body),
      (err: unknown) => {
        if (err instanceof Refusal) {
          if (FAILED_ATTEMPTS.has(err.reason)) failures.failed(source);
          if (err.reason === "unreadable") unreadable.note({ hook: label || undefined });
          const body = err.status === 200 ? { accepted: true, duplicate: true } : { error: err.shown };
          reply(res, err.status, label, err.reason, body, err.headers);
          if (err.status === 413 || err.status === 400) req.destroy();
          return;
        }
        deps.log.error({ err, hook: label }, "webhook delivery could not be queued");
        reply(res, 503, label, "unavailable", { error: "unavailable" }, { "retry-after": "5" });
      },
    );
    return true;
  };

  async function deliver(
    req: IncomingMessage,
    name: string,
    source: string,
  ): Promise<Record<string, unknown>> {
    if (req.method !== "POST") throw new Refusal(405, "method", { allow: "POST" });
    const wait = failures.waitMs(source);
    if (wait > 0)
      throw new Refusal(429, "source_failures", { "retry-after": String(Math.ceil(wait / 1000)) });
    const hook = byName.get(name);
    if (!hook) {
      // Read as a known hook's body would be, then refused as a bad signature is.
      await readCapped(req, UNKNOWN_HOOK_BODY_BYTES);
      throw new Refusal(401, "unknown_hook", {}, "bad_signature");
    }
    const { config } = hook;
    const body = await readCapped(req, config.maxBodyBytes);
    const timestamp = header(req, "x-roomgate-timestamp");
    const signature = header(req, "x-roomgate-signature");
    const problem = checkHookSignature(config.secret, timestamp, signature, body, Date.now());
    if (problem) throw new Refusal(401, problem === "missing" ? "bad_signature" : problem);
    const text = askOf(config.ask, body);
    const signatureHash = createHash("sha256").update(signature!).digest("hex");
    const given = header(req, "x-roomgate-delivery");
    if (given !== undefined && !DELIVERY_ID.test(given)) throw new Refusal(400, "bad_delivery_id");
    // Without a delivery id, the signature names the delivery: a replay of it is the same one.
    const delivery = given ?? signatureHash.slice(0, 32);
    // Before the per-minute count: a replay must not use up the real sender's budget.
    const replayKey = await guardReplay(name, signatureHash, delivery);
    const rateWait = await deps.limiter.tryAcquire([
      { group: `hook:${name}`, scope: "deliveries", max: config.perMinute, windowMs: 60_000 },
    ]);
    if (rateWait > 0) throw new Refusal(429, "rate", { "retry-after": String(Math.ceil(rateWait / 1000)) });
    const result = await deps.inbox.put({
      eventId: `hook:${name}:${delivery}`,
      room: config.room,
      namespace: hook.namespace,
      source: { type: "hook", name, at: Date.now() },
      text,
    });
    // A resend of an accepted delivery is then a duplicate before the count (best effort: the inbox de-duplicates anyway).
    await deps.redis.set(replayKey, delivery + ACCEPTED, "KEEPTTL", "XX").catch(() => undefined);
    if (result === "duplicate") throw new Refusal(200, "duplicate");
    return { accepted: true, delivery, ...(result === "held" ? { held: true } : {}) };
  }

  /**
   * The signature covers the timestamp and body, not the delivery id, so a captured
   * request could be sent again under a new id within the timestamp window: each
   * signature is remembered with its delivery id for longer than that window. A
   * delivery accepted before is a duplicate (200) here, before any count.
   */
  async function guardReplay(name: string, signatureHash: string, delivery: string): Promise<string> {
    const key = deps.keys.hookSignature(name, signatureHash);
    // Replicated before the 202, as the event is: a failover must not forget which id the signature had.
    const [set, first] = await durableWrite(deps.redis, deps.durability, key, [
      ["set", key, delivery, "PX", 2 * HOOK_WINDOW_MS + 60_000, "NX"],
      ["get", key],
    ]);
    if (set === "OK" || typeof first !== "string") return key;
    const accepted = first.endsWith(ACCEPTED);
    if ((accepted ? first.slice(0, -ACCEPTED.length) : first) !== delivery)
      throw new Refusal(409, "replayed");
    if (accepted) throw new Refusal(200, "duplicate");
    return key;
  }
}

/** The question a delivery asks: 422 when it is empty or a templated field is nested too deep. */
function askOf(template: string | undefined, body: Buffer): string {
  let text: string;
  try {
    text = renderHookAsk(template, body.toString("utf8"));
  } catch (err) {
    if (err instanceof HookTemplateTooDeepError) throw new Refusal(422, "too_deep");
    throw err;
  }
  if (text.trim() === "") throw new Refusal(422, "empty_ask");
  return text;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Reads the body up to `max` bytes; the declared length is not trusted, the bytes are
 * counted. A body cut off (the sender closed early) or unreadable is a 400.
 */
async function readCapped(req: IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) throw new Refusal(413, "too_large");
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > max) throw new Refusal(413, "too_large");
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof Refusal) throw err;
    throw new Refusal(400, "unreadable");
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
  hookDeliveriesTotal.inc({ hook, status: String(status), reason });
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", connection: "close", ...headers });
  res.end(JSON.stringify(body));
}
