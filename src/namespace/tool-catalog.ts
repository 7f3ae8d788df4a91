import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { NamespaceConfig } from "../core/config.js";
import type { ToolInfo, ToolListing } from "./tool-info.js";
import { fetchToolListing, type FetchedTools } from "./tool-listing.js";

const EMPTY: FetchedTools = {
  tools: [],
  listed: { all: 0, prefixed: 0, foreign: [], invalid: [] },
  readOnly: new Set(),
};

/**
 * A namespace's tools as of the server's last `tools/list`: the ones the room sees,
 * which of them are read-only, and what the server listed before the prefix and the
 * binding's patterns. Refreshed on every connection and on `list_changed`.
 */
export class ToolCatalog {
  private fetched: FetchedTools = EMPTY;

  constructor(
    private readonly name: string,
    private readonly prefix: string,
    private readonly patterns: NamespaceConfig["tools"],
  ) {}

  /** Lists the server's tools again and keeps the namespace's own. */
  async refresh(client: Client): Promise<void> {
    this.fetched = await fetchToolListing(client, this.prefix, this.patterns);
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
    if (listed.prefixed > 0 || listed.all === 0 || this.prefix === "") return undefined;
    return (
      `The server of "${this.name}" lists ${listed.all} tools, none named with the prefix "${this.prefix}". ` +
      `If the whole server is this namespace, set \`prefix: ""\` under namespaces.${this.name} in the configuration.`
    );
  }
}
