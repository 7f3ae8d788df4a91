import calculateSlot from "cluster-key-slot";
import { Cluster, type Redis } from "ioredis";
import type { Logger } from "../core/log.js";
import type { RedisClient } from "./redis-connection.js";

/**
 * A master that keeps answering with fewer replicas than before for this long is taken
 * to have lost them for good (a replica died), and writes to it wait for the ones left.
 * Longer than a Sentinel needs to turn a demoted master into a replica (its INFO period
 * and a resync), so that an old master still accepting writes during a failover is never
 * trusted with fewer replicas than it had.
 */
export const LOWER_AFTER_MS = 30_000;

interface NodeState {
  required: number;
  /** Since when (local ms) the node has had fewer replicas than required. */
  shortSince?: number;
}

/**
 * How many replicas a write must reach before roomgate relies on it (Redis WAIT), per
 * master. A number from the configuration is used as it is. "auto" waits for every
 * replica the master has (at least one where the topology has replicas): a write is
 * then on every replica that could be promoted, which a Sentinel switchover needs —
 * the old master keeps accepting writes for a moment after a replica was promoted,
 * and a wait for just one replica could be answered by the replica that is not. More
 * replicas seen raise the count at once; fewer lower it only after `LOWER_AFTER_MS`
 * of the master saying so (meanwhile writes are not acknowledged, and retried).
 */
export class ReplicaWait {
  private readonly nodes = new Map<string, NodeState>();

  constructor(
    private readonly client: RedisClient,
    private readonly setting: number | "auto",
    /** The least "auto" waits for (1 when the topology had replicas at start). */
    private readonly floor: number,
    readonly timeoutMs: number,
    private readonly log: Logger,
  ) {
    // A (new) master connected: what it has is read again on the next write.
    client.on("ready", () => this.nodes.clear());
  }

  /** The master a write whose first key is `key` goes to, and how many replicas it must reach. */
  async required(key: string): Promise<{ node: string; replicas: number }> {
    const node = this.nodeOf(key);
    if (this.setting !== "auto") return { node, replicas: this.setting };
    if (this.floor === 0) return { node, replicas: 0 };
    let state = this.nodes.get(node);
    if (!state) {
      const have = await this.replicasOf(node).catch(() => 0);
      state = { required: Math.max(this.floor, have) };
      this.nodes.set(node, state);
    }
    return { node, replicas: state.required };
  }

  /** Records what a WAIT answered: more replicas raise the count; too few start the clock to lower it. */
  observe(node: string, acknowledged: number, required: number): void {
    if (this.setting !== "auto") return;
    const state = this.nodes.get(node);
    if (!state) return;
    if (acknowledged >= required) {
      state.shortSince = undefined;
      if (acknowledged > state.required) state.required = acknowledged;
      return;
    }
    void this.recount(node, state);
  }

  private async recount(node: string, state: NodeState): Promise<void> {
    const have = await this.replicasOf(node).catch(() => undefined);
    if (have === undefined || have >= state.required) return;
    const now = Date.now();
    state.shortSince ??= now;
    if (now - state.shortSince < LOWER_AFTER_MS) return;
    this.log.error(
      { node, had: state.required, has: have },
      have === 0
        ? "a Redis master has no replica left: writes to it no longer wait for one and a failover may lose them"
        : "a Redis master has fewer replicas than before: writes wait for the ones left",
    );
    state.required = have;
    state.shortSince = undefined;
  }

  private nodeOf(key: string): string {
    if (!(this.client instanceof Cluster)) return "master";
    const owners = (this.client as unknown as { slots: string[][] }).slots[calculateSlot(key)];
    return owners?.[0] ?? "unknown";
  }

  private async replicasOf(node: string): Promise<number> {
    const target: Redis | undefined =
      this.client instanceof Cluster
        ? this.client.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === node)
        : this.client;
    if (!target) return 0;
    const info = await target.info("replication");
    if (!/role:master/.test(info)) return 0;
    return Number(/connected_slaves:(\d+)/.exec(info)?.[1] ?? 0);
  }
}
