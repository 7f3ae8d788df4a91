import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceUpdatedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../core/log.js";
import { resourceSubscriptions, resourceUpdatesTotal } from "../ops/metrics.js";

/** Called with the uri of a subscribed resource the server says has changed. */
export type ResourceUpdated = (uri: string) => void;

/**
 * The resources a namespace's bindings watch: on every (re)connection they are
 * subscribed again (`resources/subscribe`; a restarted server knows none of them),
 * and the server's `notifications/resources/updated` for one of them is handed on.
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

  /** Installs the notification handler on a new connection and subscribes every watched uri. */
  async attach(client: Client): Promise<void> {
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => {
      const uri = note.params.uri;
      if (!this.wanted.has(uri)) return;
      resourceUpdatesTotal.inc({ namespace: this.namespace, result: "notified" });
      this.onUpdated?.(uri);
    });
    if (!this.active) return;
    if (client.getServerCapabilities()?.resources?.subscribe !== true) {
      this.log.error(
        { uris: [...this.wanted] },
        "the namespace's server does not offer resource subscriptions; `subscribe` has no effect",
      );
      return;
    }
    let held = 0;
    for (const uri of this.wanted) {
      try {
        await client.subscribeResource({ uri });
        held += 1;
      } catch (err) {
        this.log.error({ err, uri }, "resource subscription refused by the server");
      }
    }
    resourceSubscriptions.set({ namespace: this.namespace }, held);
    this.log.info({ subscriptions: held }, "resource subscriptions held");
  }
}

/**
 * Reads a resource, shaped as a tool result of embedded resources so that it is shown
 * exactly as tool output is (text monospace and split, binary as files).
 */
export async function readAsResult(client: Client, uri: string, timeout: number): Promise<CallToolResult> {
  const read = await client.readResource({ uri }, { timeout });
  return { content: read.contents.map((resource) => ({ type: "resource" as const, resource })) };
}
