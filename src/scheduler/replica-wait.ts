import calculateSlot from "cluster-key-slot";
import { Cluster } from "ioredis";
import type { Logger } from "../core/log.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Required } from "./durable-write.js";
import type { ReplicaReport, ReplicaView } from "./replica-view.js";

/**
 * The last resort: a master that has answered with too few replicas for this long,
 * while the topology kept saying neither that a replica is gone nor that a failover
 * ended (a replica that the sentinels reach and the master does not), is taken at its
 * word, and writes wait for the replicas it has.
 */
export const LOWER_AFTER_MS = 30_000;

/** The topology is asked about one master at most this often. */
const ASK_EVERY_MS = 250;

/** A master's count is read again in the background when it is older than this. */
const REFRESH_MS = 5000;

/**
 * How long a WAIT may take while a replica the write must reach is known not to be in
 * sync: the write fails fast and is retried, instead of holding the shared connection
 * (and every command behind it) for the whole timeout, one write after another.
 */
const BEHIND_WAIT_MS = 50;

interface NodeState {
  required: number;
  /** Fewer replicas are in sync than required, by the last report. */
  behind: boolean;
  /** Since when (local ms) writes to the node have been acknowledged by too few replicas. */
  shortSince?: number;
  askedAt: number;
  asking?: Promise<void>;
}

/**
 * How many replicas a write must reach before roomgate relies on it (Redis WAIT), per
 * master. A number from the configuration is used as it is. "auto" waits for every
 * replica the master has had, at least one where the topology has a live replica for
 * it: a write is then on every replica that could be promoted. More replicas online
 * raise the count at once. Fewer lower it only when the topology says why (ReplicaView):
 * a replica the sentinels have down, or the cluster agreed failed, is gone, and writes
 * wait for the ones left; while a failover is under way (a sentinel has the master down
 * or a failover in progress, or names another master; the cluster moved the master's
 * slots) nothing is lowered — the old master may still take writes that a replica
 * being promoted will never see — and writes are not acknowledged until the client
 * follows the new master. A replica that is alive but not in sync (lagging, resyncing)
 * is waited for, up to LOWER_AFTER_MS.
 */
export class ReplicaWait {
  private readonly nodes = new Map<string, NodeState>();
  /** Masters already reported as having no replica. */
  private readonly bare = new Set<string>();
  /** Settles on the next "ready" (while the client reconnects). */
  private connected: { promise: Promise<void>; resolve: () => void } | undefined;
  /** When the topology was last asked whether a replica joined, while it had none at start. */
  private joinAskedAt = 0;
  private joining: Promise<void> | undefined;

  constructor(
    private readonly client: RedisClient,
    private readonly setting: number | "auto",
    /**
     * The least "auto" waits for where a replica is alive: 1 when the topology had
     * replicas at start, or once one joined (see `watchForReplicas`).
     */
    private floor: number,
    readonly timeoutMs: number,
    private readonly log: Logger,
    private readonly view: ReplicaView,
  ) {
    // ioredis emits its status events on the next tick, and resends what was in flight
    // and queued as it turns ready, before "ready" is emitted: stale WAITs are failed at
    // "connect", which comes a round trip (its ready check) before that.
    client.on("connect", () => failStaleWaits(client));
    client.on("ready", () => {
      // A (new) master connected: what it has is read again on the next write.
      this.nodes.clear();
      this.connected?.resolve();
      this.connected = undefined;
    });
  }

  /**
   * Settles once the client is connected: a write's count is read for the master it
   * will reach. A write queued while the client reconnects would otherwise carry the
   * old master's count to the new one, and every WAIT for a replica the new master
   * does not have holds the shared connection for its whole timeout, one after another
   * (measured: 25 s of no answers after a Sentinel master was killed, with the new
   * master in sync after 2 s).
   */
  private async ready(): Promise<void> {
    // An ended client fails its commands at once, as callers expect (the watch replaces it).
    if (this.client.status === "ready" || this.client.status === "end") return;
    if (!this.connected) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.connected = { promise, resolve };
    }
    await this.connected.promise;
  }

  /** The master a write whose first key is `key` goes to, and how many replicas it must reach. */
  async required(key: string): Promise<Required> {
    const node = this.nodeOf(key);
    if (this.setting !== "auto") return { node, replicas: this.setting };
    if (this.floor === 0) {
      this.watchForReplicas(node);
      return { node, replicas: 0 };
    }
    await this.ready();
    let state = this.nodes.get(node);
    if (!state) {
      const report = await this.report(node);
      const required = this.firstCount(node, report);
      this.log.debug({ node, required, ...report }, "replica count of a master read");
      state = this.nodes.get(node) ?? {
        required,
        behind: report.online.length < required,
        askedAt: Date.now(),
      };
      this.nodes.set(node, state);
    } else if (Date.now() - state.askedAt > REFRESH_MS) {
      this.ask(node, state);
    }
    return {
      node,
      replicas: state.required,
      everyInSync: true,
      ...(state.behind ? { timeoutMs: BEHIND_WAIT_MS } : {}),
    };
  }

  /**
   * Records what a WAIT answered: more replicas (acknowledging, or in sync on the master
   * when the write was applied) raise the count at once; too few ask the topology why.
   * The count is never lowered below the master's replicas in sync (see `decide`), so
   * raising it to them undoes no lowering.
   */
  observe(node: string, acknowledged: number, required: number, inSync = 0): void {
    if (this.setting !== "auto") return;
    const state = this.nodes.get(node);
    if (!state) return;
    if (inSync > state.required) {
      this.log.debug({ node, had: state.required, has: inSync }, "a Redis master has more replicas in sync");
      state.required = inSync;
    }
    if (acknowledged >= required) {
      state.shortSince = undefined;
      state.behind = false;
      if (acknowledged > state.required) state.required = acknowledged;
      return;
    }
    state.shortSince ??= Date.now();
    this.ask(node, state);
  }

  /**
   * With no replica at start, asks the topology every REFRESH_MS whether one has joined
   * since; from then on writes wait as if it had been there at start. A process started
   * while its replicas were still syncing (a compose file bringing everything up at once)
   * would otherwise never wait for them, and lose acknowledged writes when one is promoted.
   */
  private watchForReplicas(node: string): void {
    if (this.joining || Date.now() - this.joinAskedAt < REFRESH_MS) return;
    this.joinAskedAt = Date.now();
    this.joining = this.report(node)
      .then((report) => {
        if (report.online.length === 0) return;
        this.log.info(
          { node, replicas: report.online.length },
          "a Redis replica joined: writes wait for replicas",
        );
        this.floor = 1;
      })
      .finally(() => (this.joining = undefined));
  }

  /** A new master's count: the replicas online, at least the floor while the topology has one alive. */
  private firstCount(node: string, report: ReplicaReport): number {
    const floor = report.unsettled || report.alive.length > 0 ? this.floor : 0;
    const count = Math.max(report.online.length, floor);
    if (count === 0 && !this.bare.has(node)) {
      this.bare.add(node);
      this.log.warn(
        { node },
        "a Redis master has no replica: writes to it wait for none until one joins, and losing it loses them",
      );
    }
    return count;
  }

  private ask(node: string, state: NodeState): void {
    if (state.asking || Date.now() - state.askedAt < ASK_EVERY_MS) return;
    state.askedAt = Date.now();
    state.asking = this.report(node)
      .then((report) => this.decide(node, state, report))
      .finally(() => (state.asking = undefined));
  }

  /** Follows the topology: raise to the replicas online; lower to the ones alive when it says the rest are gone. */
  private decide(node: string, state: NodeState, report: ReplicaReport): void {
    if (report.online.length > state.required) {
      state.required = report.online.length;
      state.behind = false;
      return;
    }
    state.behind = report.online.length < state.required;
    this.log.debug({ node, required: state.required, ...report }, "replica count of a master checked");
    if (state.shortSince === undefined) return;
    const alive = new Set([...report.alive, ...report.online]).size;
    let lowered: number | undefined;
    let why = "";
    if (!report.unsettled && alive < state.required) {
      lowered = Math.max(alive, report.online.length);
      why = "the topology has the others down";
    } else if (Date.now() - state.shortSince >= LOWER_AFTER_MS) {
      lowered = report.online.length;
      why = `too few replicas acknowledged writes for ${LOWER_AFTER_MS / 1000} s`;
    }
    if (lowered === undefined || lowered >= state.required) return;
    const line = { node, had: state.required, has: lowered, why, unsettled: report.unsettled };
    if (lowered === 0)
      this.log.error(
        line,
        "a Redis master has no replica left: writes to it no longer wait for one and losing it loses them",
      );
    else this.log.warn(line, "a Redis master has fewer replicas than before: writes wait for the ones left");
    state.required = lowered;
    state.shortSince = undefined;
    state.behind = report.online.length < lowered;
  }

  private async report(node: string): Promise<ReplicaReport> {
    return this.view
      .report(this.client, node)
      .catch((): ReplicaReport => ({ online: [], alive: [], unsettled: true }));
  }

  private nodeOf(key: string): string {
    if (!(this.client instanceof Cluster)) return "master";
    const owners = (this.client as unknown as { slots: string[][] }).slots[calculateSlot(key)];
    return owners?.[0] ?? "unknown";
  }
}

/**
 * Keeps a reconnected client from carrying counts of the master it lost: every write
 * with a WAIT that was in flight when the connection dropped, or was queued while it
 * was down, is failed instead of sent to the new master by ioredis. A WAIT counts
 * replicas of the old master; on a new one with fewer it holds the connection (and
 * every command behind it) for its whole timeout, one after another — measured: a
 * frozen master's 42 WAITs resent to its successor kept a process from every answer
 * for 30 s. Each is part of a write its caller sends again (`isUnacknowledged`), with a
 * count read for the new master. The whole pipeline of a WAIT is failed, never the
 * WAIT alone: ioredis writes a pipeline once all its commands have been handed to it,
 * so a pipeline resent without one of them would never be written, and every reply
 * after it would go to the wrong command. Called on "connect", while ioredis still
 * holds both queues.
 */
function failStaleWaits(client: RedisClient): void {
  const queues = client as unknown as { prevCommandQueue?: Queue | null; offlineQueue?: Queue };
  for (const queue of [queues.prevCommandQueue, queues.offlineQueue]) {
    if (!queue?.length) continue;
    const items: QueuedCommand[] = [];
    for (let item = queue.shift(); item; item = queue.shift()) items.push(item);
    const stale = new Set(items.filter((i) => i.command.name.toLowerCase() === "wait").map(batchOf));
    for (const item of items) {
      if (stale.has(batchOf(item))) item.command.reject(new Error("Connection is closed."));
      else queue.push(item);
    }
  }
}

/** The pipeline a queued command belongs to (its writer), or the command alone. */
function batchOf(item: QueuedCommand): unknown {
  return item.stream?.isPipeline ? item.stream : item;
}

/** What an ioredis connection queues per command; a pipeline's commands share its writer. */
interface QueuedCommand {
  command: { name: string; reject(err: Error): void };
  stream?: { isPipeline?: boolean };
}

/** ioredis' command queues (denque). */
interface Queue {
  length: number;
  shift(): QueuedCommand | undefined;
  push(item: QueuedCommand): void;
}
