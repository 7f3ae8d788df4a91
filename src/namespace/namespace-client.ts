import type { CallToolResult, Client } from "@modelcontextprotocol/client";
import type { NamespaceConfig } from "../core/config.js";
import type { Logger } from "../core/log.js";
import { START_WAIT_MS } from "./call-recovery.js";
import type { CallOptions, NamespaceAbout } from "./call-options.js";
import { ElicitationRouter } from "./elicitation-router.js";
import { isModern, TASKS_EXTENSION, type RevisionChoice } from "./mcp-client.js";
import { NamespaceBinding } from "./namespace-binding.js";
import { NamespaceConnection } from "./namespace-connection.js";
import { DEFAULT_NAMESPACE_LIMITS, type NamespaceLimits } from "./namespace-limits.js";
import { ResourceSubscriptions } from "./resource-subscriptions.js";
import type { TaskLedger } from "./task-call.js";
import { ToolCalls } from "./tool-calls.js";
import { ToolCatalog } from "./tool-catalog.js";
import type { ToolInfo, ToolListing } from "./tool-info.js";

/**
 * One namespace served over MCP, as the engine sees it: what its binding allows
 * (NamespaceBinding), its connection and restarts (NamespaceConnection), its tools
 * (ToolCatalog) and its calls (ToolCalls), put together.
 */
export class NamespaceClient extends NamespaceBinding {
  private readonly connection: NamespaceConnection;
  private readonly catalog: ToolCatalog;
  private readonly calls: ToolCalls;
  private readonly elicitations = new ElicitationRouter();
  /** Resources the bindings watch, subscribed again on every connection. */
  readonly subscriptions: ResourceSubscriptions;
  /** Where tools run as MCP tasks keep their task ids; without it no tool runs as a task. */
  tasks: TaskLedger | undefined;

  constructor(
    name: string,
    config: NamespaceConfig,
    private readonly log: Logger,
    /** What every namespace is held to (`limits.*`): reply size, listing size. */
    limits: NamespaceLimits = DEFAULT_NAMESPACE_LIMITS,
    /** The MCP revisions it may speak: the newest both sides do, or one (`roomgate check` grades each). */
    revision: RevisionChoice = "newest",
  ) {
    super(name, config);
    const maxReplyBytes = limits.maxToolResultBytes;
    this.subscriptions = new ResourceSubscriptions(name, log);
    this.catalog = new ToolCatalog({ name, prefix: this.prefix, patterns: config.tools }, limits, log);
    this.connection = new NamespaceConnection(
      name,
      config,
      log,
      maxReplyBytes,
      {
        prepare: (client) => this.prepare(client),
        ready: async (client) => {
          await this.catalog.refresh(client);
          await this.subscriptions.attach(client);
        },
        connected: () => this.connected(),
      },
      revision,
    );
    this.calls = new ToolCalls({
      name,
      connection: this.connection,
      catalog: this.catalog,
      elicitations: this.elicitations,
      log,
      askTool: this.askTool,
      timeoutMs: config.timeoutSeconds * 1000,
      maxCallMs: config.maxCallSeconds === undefined ? undefined : config.maxCallSeconds * 1000,
      maxReplyBytes,
      tasks: () => this.tasks,
    });
  }

  /** What the server listed before the prefix and the binding's patterns (for `roomgate check`). */
  get listing(): ToolListing {
    return this.catalog.listing;
  }

  /**
   * A line for the operator and the room when the server lists tools but none under
   * the prefix (a third-party server usually needs `prefix: ""`); undefined otherwise.
   */
  prefixHint(): string | undefined {
    return this.catalog.prefixHint();
  }

  /** Process id of the stdio child, when there is one (tests kill it to check restarts). */
  get pid(): number | null {
    return this.connection.pid;
  }

  /** Connects now; later calls reconnect by themselves. */
  async start(): Promise<void> {
    await this.connection.ensureConnected(Number.POSITIVE_INFINITY);
  }

  /** The namespace's own tools, as of the last `tools/list` (refreshed on list_changed). */
  async tools(): Promise<ToolInfo[]> {
    await this.connection.ensureConnected(START_WAIT_MS);
    return this.catalog.tools;
  }

  /** The MCP revision of the last connection, or undefined before one was made. */
  get revision(): string | undefined {
    return this.connection.about.revision;
  }

  /** What the server said about itself when it was last connected. */
  async about(): Promise<NamespaceAbout> {
    await this.connection.ensureConnected(START_WAIT_MS);
    return this.connection.about;
  }

  /**
   * Whether task tools can run here: a place for task ids, and a server that offers
   * tasks for tool calls (2025-11-25: `tasks.requests.tools.call`; 2026-07-28: the
   * Tasks extension).
   */
  get runsTasks(): boolean {
    const client = this.connection.current;
    if (this.tasks === undefined || client === undefined) return false;
    const capabilities = client.getServerCapabilities();
    return isModern(client)
      ? capabilities?.extensions?.[TASKS_EXTENSION] !== undefined
      : capabilities?.tasks?.requests?.tools?.call !== undefined;
  }

  /** Reads one of the server's resources, shaped as a tool result so it is shown as tool output is. */
  async readResource(uri: string): Promise<CallToolResult> {
    return this.calls.readResource(uri);
  }

  /** True when `tool` is one of this namespace's tools. */
  async has(tool: string): Promise<boolean> {
    return (await this.tools()).some((t) => t.name === tool);
  }

  /** Calls a tool and returns its raw result (see ToolCalls.call for failures and retries). */
  async call(
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<CallToolResult> {
    return this.calls.call(tool, args, options);
  }

  /** Closes the connection (and stops the stdio child) for good. */
  async close(): Promise<void> {
    await this.connection.close();
  }

  /** The handlers of a fresh client: the server's questions go to the running call, list_changed lists again. */
  private prepare(client: Client): void {
    client.setRequestHandler("elicitation/create", (request, ctx) =>
      this.elicitations.handle(request.params, ctx.mcpReq.signal),
    );
    client.setNotificationHandler("notifications/tools/list_changed", () => this.catalog.changed(client));
  }

  private connected(): void {
    this.log.info({ tools: this.catalog.tools.length }, "namespace connected");
    const hint = this.prefixHint();
    if (hint) this.log.warn({ listed: this.catalog.listing.all, prefix: this.prefix }, hint);
  }
}
