import type { CallToolResult, Client, SubscriptionFilter } from "@modelcontextprotocol/client";
import type { Logger } from "../core/log.js";
import { backoffMs, sleep } from "../core/retry.js";
import { resourceSubscriptions, resourceUpdatesTotal } from "../ops/metrics.js";
import { isModern } from "./mcp-client.js";

/** Called with the uri of a subscribed resource the server says has changed. */
export type ResourceUpdated = (uri: string) => void;

/** How soon a listen stream the server dropped is opened again. */
const RELISTEN = { firstMs: 1_000, maxMs: 30_000 };

/**
 * The resources a namespace's bindings watch, and the change notifications a connection
 * follows. On every (re)connection they are asked for again (a restarted server knows
 * none of them): on 2025-11-25 with `resources/subscribe` per resource (tools'
 * list_changed arrives unasked), on 2026-07-28 with one `subscriptions/listen` stream
 * carrying the resources and the tools' list_changed. The server's
 * `notifications/resources/updated` for a watched resource is handed on.
 */
export class ResourceSubscriptions {
  private readonly wanted = new Set<string>();
  private onUpdated: ResourceUpdated | undefined;

  constructor(
    private readonly namespace: string,
    private readonly log: Logger,
  ) {}

  /** Watches these uris from now on; `attach` subscribes them on the next (or current) connection. */
  watch(uris: string[], onUpdated: ResourceUpdated): void {
    for (const uri of uris) this.wanted.add(uri);
    this.onUpdated = onUpdated;
  }

  /** Whether anything is watched (so that a connection is worth keeping for it). */
  get active(): boolean {
    return this.wanted.size > 0 && this.onUpdated !== undefined;
  }

  /** Installs the notification handler on a new connection and asks for the changes it follows. */
  async attach(client: Client): Promise<void> {
    client.setNotificationHandler("notifications/resources/updated", (note) => {
      const uri = note.params.uri;
      if (!this.wanted.has(uri)) return;
      resourceUpdatesTotal.inc({ namespace: this.namespace, result: "notified" });
      this.onUpdated?.(uri);
    });
    const subscribable = client.getServerCapabilities()?.resources?.subscribe === true;
    if (this.active && !subscribable) {
      this.log.error(
        { uris: [...this.wanted] },
        "the namespace's server does not offer resource subscriptions; `subscribe` has no effect",
      );
    }
    if (isModern(client)) return this.listen(client, subscribable);
    if (!this.active || !subscribable) return;
    let held = 0;
    for (const uri of this.wanted) {
      try {
        await client.subscribeResource({ uri });
        held += 1;
      } catch (err) {
        this.log.error({ err, uri }, "resource subscription refused by the server");
      }
    }
    this.held(held);
  }

  /** Opens the connection's `subscriptions/listen` stream, and opens it again when the server drops it. */
  private async listen(client: Client, subscribable: boolean): Promise<void> {
    const filter: SubscriptionFilter = {};
    if (client.getServerCapabilities()?.tools?.listChanged) filter.toolsListChanged = true;
    if (this.active && subscribable) filter.resourceSubscriptions = [...this.wanted];
    if (Object.keys(filter).length === 0) return;
    const subscription = await client.listen(filter);
    const honored = subscription.honoredFilter.resourceSubscriptions ?? [];
    const refused = (filter.resourceSubscriptions ?? []).filter((uri) => !honored.includes(uri));
    if (refused.length > 0) this.log.error({ uris: refused }, "resource subscription refused by the server");
    if (filter.resourceSubscriptions) this.held(honored.length);
    void subscription.closed.then((reason) => this.relisten(client, subscribable, reason));
  }

  private async relisten(client: Client, subscribable: boolean, reason: string): Promise<void> {
    // "local" is our own close, "graceful" the server ending it on purpose: only a drop is listened again.
    for (let attempt = 1; reason === "remote" && client.transport !== undefined; attempt++) {
      await sleep(backoffMs(RELISTEN, attempt - 1));
      try {
        this.log.warn({ attempt }, "the server dropped the subscriptions/listen stream; listening again");
        return await this.listen(client, subscribable);
      } catch (err) {
        this.log.warn({ err }, "listening again failed");
      }
    }
  }

  private held(count: number): void {
    resourceSubscriptions.set({ namespace: this.namespace }, count);
    this.log.info({ subscriptions: count }, "resource subscriptions held");
  }
}

/**
 * Reads a resource, shaped as a tool result of embedded resources so that it is shown
 * exactly as tool output is (text monospace and split, binary as files).
 */
export async function readAsResult(client: Client, uri: string, timeout: number): Promise<CallToolResult> {
  // An update was just announced: what the client may have cached of it is stale.
  const read = await client.readResource({ uri }, { timeout, cacheMode: "refresh" });
  return { content: read.contents.map((resource) => ({ type: "resource" as const, resource })) };
}
