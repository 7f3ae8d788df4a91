import type { Client } from "@modelcontextprotocol/client";
import type { NamespaceConfig } from "../core/config.js";
import type { Logger } from "../core/log.js";
import { sleep } from "../core/retry.js";
import type { NamespaceLimits } from "./namespace-limits.js";
import type { ToolInfo, ToolListing } from "./tool-info.js";
import { fetchToolListing, type FetchedTools } from "./tool-listing.js";

/** Shortest time between two listings on `list_changed`: the server decides how often it sends one. */
export const RELIST_GAP_MS = 1_000;

const EMPTY: FetchedTools = {
  tools: [],
  listed: { all: 0, prefixed: 0, foreign: [], invalid: [] },
  readOnly: new Set(),
};

/**
 * A namespace's tools as of the server's last `tools/list`: the ones the room sees,
 * which of them are read-only, and what the server listed before the prefix and the
 * binding's patterns. Refreshed on every connection and on `list_changed`, the
 * latter at most once per RELIST_GAP_MS however many notifications come.
 */
export class ToolCatalog {
  private fetched: FetchedTools = EMPTY;
  /** The listing after `list_changed` that runs or waits for its turn, if any. */
  private relisting: Promise<void> | undefined;
  /** Another `list_changed` came while relisting: list once more after it. */
  private changedAgain = false;
  private lastListedAt = 0;

  constructor(
    private readonly binding: { name: string; prefix: string; patterns: NamespaceConfig["tools"] },
    private readonly limits: NamespaceLimits,
    private readonly log: Logger,
  ) {}

  /** Lists the server's tools again and keeps the namespace's own. */
  async refresh(client: Client): Promise<void> {
    try {
      this.fetched = await fetchToolListing(client, this.binding, this.limits);
    } finally {
      this.lastListedAt = Date.now();
    }
  }

  /**
   * The server said its tools changed: lists them again, at most once per RELIST_GAP_MS;
   * notifications that come meanwhile are folded into one more listing after it.
   */
  changed(client: Client): void {
    if (this.relisting) {
      this.changedAgain = true;
      return;
    }
    this.relisting = this.relist(client).finally(() => (this.relisting = undefined));
  }

  private async relist(client: Client): Promise<void> {
    do {
      this.changedAgain = false;
      const wait = this.lastListedAt + RELIST_GAP_MS - Date.now();
      if (wait > 0) await sleep(wait);
      await this.refresh(client).catch((err: unknown) =>
        this.log.warn({ err }, "refreshing tools after list_changed failed"),
      );
    } while (this.changedAgain);
  }

  /** The namespace's own tools. */
  get tools(): ToolInfo[] {
    return this.fetched.tools;
  }

  /** What the server listed before the prefix and the binding's patterns (for `roomgate check`). */
  get listing(): ToolListing {
    return this.fetched.listed;
  }

  /** The namespace's tool of that name, if it has one. */
  find(tool: string): ToolInfo | undefined {
    return this.fetched.tools.find((t) => t.name === tool);
  }

  /** True when the server annotated the tool `readOnlyHint`. */
  isReadOnly(tool: string): boolean {
    return this.fetched.readOnly.has(tool);
  }

  /**
   * A line for the operator and the room when the server lists tools but none under
   * the prefix (a third-party server usually needs `prefix: ""`); undefined otherwise.
   */
  prefixHint(): string | undefined {
    const listed = this.fetched.listed;
    const { name, prefix } = this.binding;
    if (listed.prefixed > 0 || listed.all === 0 || prefix === "") return undefined;
    return (
      `The server of "${name}" lists ${listed.all} tools, none named with the prefix "${prefix}". ` +
      `If the whole server is this namespace, set \`prefix: ""\` under namespaces.${name} in the configuration.`
    );
  }
}
