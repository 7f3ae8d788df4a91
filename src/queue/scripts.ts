import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";

function load(name: string): string {
  return readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), "utf8");
}

const sources = {
  enqueueEvent: load("enqueue-event"),
  releaseLease: load("release-lease"),
  renewLease: load("renew-lease"),
  popHead: load("pop-head"),
};

/** The queue's documented Lua scripts (src/queue/lua), run atomically in Redis. */
export class QueueScripts {
  constructor(private readonly redis: Redis) {}

  /** 1 when appended, 0 when the event id was seen before. */
  async enqueueEvent(dedupeKey: string, inboxKey: string, json: string, ttlSeconds: number): Promise<number> {
    return Number(
      await this.redis.eval(sources.enqueueEvent, 2, dedupeKey, inboxKey, json, String(ttlSeconds)),
    );
  }

  /** 1 when released (or no longer ours), 0 when the inbox still has events. */
  async releaseLease(leaseKey: string, inboxKey: string, token: string): Promise<number> {
    return Number(await this.redis.eval(sources.releaseLease, 2, leaseKey, inboxKey, token));
  }

  /** 1 when renewed, 0 when the lease was lost. */
  async renewLease(leaseKey: string, token: string, ttlMs: number): Promise<number> {
    return Number(await this.redis.eval(sources.renewLease, 1, leaseKey, token, String(ttlMs)));
  }

  /** 1 when the handled head was removed. */
  async popHead(inboxKey: string, json: string): Promise<number> {
    return Number(await this.redis.eval(sources.popHead, 1, inboxKey, json));
  }
}
