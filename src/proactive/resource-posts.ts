import { createHash } from "node:crypto";
import type { Job } from "bullmq";
import type { RedisClient } from "../sessions/redis-connection.js";
import { z } from "zod";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/log.js";
import type { NamespaceRegistry } from "../namespace/namespace-registry.js";
import { resourceUpdatesTotal } from "../ops/metrics.js";
import type { Keys } from "../sessions/keys.js";
import type { ProactiveInbox } from "./proactive-inbox.js";
import type { ProactiveQueue } from "./proactive-queue.js";
import { roomToken } from "./schedule-ids.js";

/** One room watching resources of its namespace, and what an update does there. */
export interface ResourceBinding {
  room: string;
  namespace: string;
  uris: string[];
  then: "show" | "ask";
}

/** The data of a `resource` job: post one resource's update into one room for one throttle window. */
export const ResourceJobSchema = z.object({
  room: z.string().min(1),
  namespace: z.string().min(1),
  uri: z.string().min(1),
  then: z.enum(["show", "ask"]),
  window: z.number().int(),
});

/** The rooms of every binding with `subscribe`: a bot's DMs with each of its users and its groups, Matrix rooms. */
export function resourceBindings(config: Config): ResourceBinding[] {
  const out: ResourceBinding[] = [];
  const add = (
    room: string,
    namespace: string,
    uris: string[] | undefined,
    then: "show" | "ask" | undefined,
  ) => {
    if (uris && uris.length > 0) out.push({ room, namespace, uris, then: then ?? "show" });
  };
  for (const bot of config.telegram?.bots ?? []) {
    const id = bot.token.split(":")[0];
    // A bot bound only through its topics has no namespace of its own for its DMs.
    const dm = bot.namespace;
    if (dm !== undefined)
      for (const user of bot.users) add(`telegram:${id}:${user}`, dm, bot.subscribe, bot.onUpdate);
    for (const group of bot.groups) {
      const namespace = group.namespace ?? bot.namespace;
      if (namespace !== undefined)
        add(`telegram:${id}:${group.chat}`, namespace, group.subscribe, group.onUpdate);
    }
  }
  for (const room of config.matrix?.rooms ?? []) {
    add(`matrix:${room.room}`, room.namespace, room.subscribe, room.onUpdate);
  }
  return out;
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * Turns `notifications/resources/updated` into posts: each update schedules a bullmq
 * job per watching room for the current throttle window (or, when that window already
 * has one, for the next), so a room gets at most one post per resource and window and
 * the last update is never lost; every process that hears the same notification
 * schedules the same job id. The job reads the resource and queues a turn only when
 * its content differs from what the room was last shown.
 */
export class ResourcePosts {
  private readonly windowMs: number;

  constructor(
    private readonly deps: {
      queue: ProactiveQueue;
      redis: RedisClient;
      keys: Keys;
      inbox: ProactiveInbox;
      namespaces: NamespaceRegistry;
      bindings: ResourceBinding[];
      throttleMs: number;
      log: Logger;
    },
  ) {
    this.windowMs = Math.max(1000, deps.throttleMs);
  }

  /** Subscribes every watched resource in this process and connects the namespaces that have one. */
  watch(): void {
    const byNamespace = new Map<string, Set<string>>();
    for (const b of this.deps.bindings) {
      const set = byNamespace.get(b.namespace) ?? new Set();
      b.uris.forEach((u) => set.add(u));
      byNamespace.set(b.namespace, set);
    }
    for (const [name, uris] of byNamespace) {
      const client = this.deps.namespaces.get(name);
      client.subscriptions.watch([...uris], (uri) => {
        this.updated(name, uri).catch((err: unknown) =>
          this.deps.log.error({ err, namespace: name, uri }, "a resource update could not be scheduled"),
        );
      });
      client
        .start()
        .catch((err: unknown) =>
          this.deps.log.error(
            { err, namespace: name },
            "namespace with subscriptions not reachable; retried",
          ),
        );
    }
  }

  /** Schedules the update's post in every room that watches the resource. */
  async updated(namespace: string, uri: string): Promise<void> {
    const { keys, redis, queue } = this.deps;
    for (const b of this.deps.bindings) {
      if (b.namespace !== namespace || !b.uris.includes(uri)) continue;
      const now = Date.now();
      const current = Math.floor(now / this.windowMs);
      const keep = 2 * this.windowMs + 60_000;
      const first = await redis.set(keys.resourceWindow(b.room, uri, current), "1", "PX", keep, "NX");
      const window = first === "OK" ? current : current + 1;
      if (window !== current)
        await redis.set(keys.resourceWindow(b.room, uri, window), "1", "PX", keep, "NX");
      const delay = window === current ? 0 : window * this.windowMs - now;
      const jobId = `res.${roomToken(b.room)}.${digest(uri).slice(0, 16)}.${window}`;
      await queue.add("resource", { room: b.room, namespace, uri, then: b.then, window }, jobId, delay);
    }
  }

  /** The `resource` job: reads the resource and queues its post unless the room already saw this content. */
  async post(job: Job): Promise<string> {
    const data = ResourceJobSchema.parse(job.data);
    const client = this.deps.namespaces.get(data.namespace);
    const read = await client.readResource(data.uri);
    const hash = digest(JSON.stringify(read.content ?? []));
    const seenKey = this.deps.keys.resourceSeen(data.room, data.uri);
    if ((await this.deps.redis.get(seenKey)) === hash) {
      resourceUpdatesTotal.inc({ namespace: data.namespace, result: "unchanged" });
      return "unchanged";
    }
    const result = await this.deps.inbox.put({
      eventId: `res:${data.namespace}:${data.uri}:${data.window}`,
      room: data.room,
      namespace: data.namespace,
      source: { type: "resource", name: data.uri, at: Date.now() },
      text: data.then === "ask" ? `The resource ${data.uri} was updated:` : "",
      read: { uri: data.uri, then: data.then },
    });
    await this.deps.redis.set(seenKey, hash, "PX", 30 * 24 * 3600_000);
    resourceUpdatesTotal.inc({ namespace: data.namespace, result: result === "queued" ? "posted" : result });
    return result;
  }
}
