import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { NamespaceConfig } from "../core/config.js";
import { NamespaceError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { namespaceCallSeconds, namespaceCalls } from "../ops/metrics.js";
import { START_WAIT_MS, answersPing, isReadOnly, lostToCrash, timedOut } from "./call-recovery.js";
import { RestartPolicy } from "./restart-policy.js";
import { createTransport } from "./transport.js";
import { parseToolInfo, type ToolInfo } from "./tool-info.js";

/** What a namespace's server says about itself at initialisation (MCP serverInfo and instructions). */
export interface NamespaceAbout {
  title?: string;
  description?: string;
  instructions?: string;
}

/** Options of one call: a timeout (default from config) and a signal that cancels it. */
export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * One namespace served over MCP: keeps a connection (restarting a crashed or hung
 * stdio child with exponential backoff), lists only the namespace's own tools, and
 * calls them with a timeout; a call lost to a crash is retried once when it is safe.
 */
export class NamespaceClient {
  readonly prefix: string;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private connecting: Promise<void> | undefined;
  private toolList: ToolInfo[] = [];
  private readOnlyTools = new Set<string>();
  private serverAbout: NamespaceAbout = {};
  private closed = false;
  private readonly restarts = new RestartPolicy();
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    private readonly config: NamespaceConfig,
    private readonly log: Logger,
  ) {
    this.prefix = config.prefix ?? `${name}.`;
  }

  /** Name of the namespace's router tool. */
  get askTool(): string {
    return `${this.prefix}ask`;
  }

  /** Name of the namespace's tool-listing tool. */
  get toolsTool(): string {
    return `${this.prefix}tools`;
  }

  /** Process id of the stdio child, when there is one (tests kill it to check restarts). */
  get pid(): number | null {
    const t = this.transport as { pid?: number | null } | undefined;
    return t?.pid ?? null;
  }

  /** Connects now; later calls reconnect by themselves. */
  async start(): Promise<void> {
    await this.ensureConnected(Number.POSITIVE_INFINITY);
  }

  /** The namespace's own tools, as of the last `tools/list` (refreshed on list_changed). */
  async tools(): Promise<ToolInfo[]> {
    await this.ensureConnected(START_WAIT_MS);
    return this.toolList;
  }

  /** What the server said about itself when it was last connected. */
  async about(): Promise<NamespaceAbout> {
    await this.ensureConnected(START_WAIT_MS);
    return this.serverAbout;
  }

  /** True when `tool` is one of this namespace's tools. */
  async has(tool: string): Promise<boolean> {
    return (await this.tools()).some((t) => t.name === tool);
  }

  /**
   * Calls a tool and returns its raw result; protocol failures, timeouts and crashes
   * become a NamespaceError with a line the person can read. A call lost to a crash
   * is sent once more to the restarted server when running it twice is harmless: the
   * router (deterministic by contract) or a tool annotated `readOnlyHint`.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<CallToolResult> {
    const timeout = options.timeoutMs ?? this.config.timeoutMs;
    const timer = namespaceCallSeconds.startTimer({ namespace: this.name });
    try {
      try {
        const result = await this.attempt(tool, args, options, timeout);
        timer({ outcome: result.isError ? "tool_error" : "ok" });
        return result;
      } catch (err) {
        if (!lostToCrash(err) || !this.retrySafe(tool) || this.closed || options.signal?.aborted) throw err;
        namespaceCalls.inc({ namespace: this.name, outcome: "retried" });
        this.log.warn({ tool }, "call lost to a namespace crash; retrying once on the restarted server");
        const result = await this.attempt(tool, args, options, timeout);
        timer({ outcome: result.isError ? "tool_error" : "ok" });
        return result;
      }
    } catch (err) {
      namespaceCalls.inc({ namespace: this.name, outcome: "failed" });
      timer({ outcome: "failed" });
      throw this.callError(tool, err, timeout);
    }
  }

  private retrySafe(tool: string): boolean {
    return tool === this.askTool || this.readOnlyTools.has(tool);
  }

  private async attempt(
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions,
    timeout: number,
  ): Promise<CallToolResult> {
    await this.ensureConnected(Math.min(timeout, START_WAIT_MS));
    const client = this.client!;
    try {
      // The low-level request skips the SDK's own outputSchema check: roomgate
      // validates Answers itself so that a malformed one becomes a clear line.
      const result = await client.request(
        { method: "tools/call", params: { name: tool, arguments: args } },
        CallToolResultSchema,
        { timeout, signal: options.signal },
      );
      namespaceCalls.inc({ namespace: this.name, outcome: result.isError ? "tool_error" : "ok" });
      return result;
    } catch (err) {
      if (timedOut(err)) void this.killIfHung(client, tool, timeout);
      throw err;
    }
  }

  /** After a timeout: a server that no longer answers a ping is hung; kill it so it restarts. */
  private async killIfHung(client: Client, tool: string, timeout: number): Promise<void> {
    if (await answersPing(client, timeout)) return;
    if (this.client !== client || this.closed) return;
    const pid = this.pid;
    const transport = this.transport;
    this.log.warn({ tool, pid }, "namespace server hung (no answer to a ping); killing it to restart");
    // Detached first, so no call is sent to the dying child while it is being killed.
    this.onClosed(client);
    if (pid !== null) {
      try {
        process.kill(pid, "SIGKILL");
      } catch (err) {
        this.log.debug({ err }, "the hung namespace server had already exited");
      }
    } else {
      await transport?.close().catch(() => undefined);
    }
  }

  /** Closes the connection (and stops the stdio child) for good. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  private callError(tool: string, err: unknown, timeout: number): NamespaceError {
    if (err instanceof NamespaceError) return err;
    const agent = `The "${this.name}" agent`;
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
      return new NamespaceError(this.name, `${tool} timed out after ${timeout} ms`, {
        cause: err,
        userText: `${agent} did not answer in time; please try again.`,
      });
    }
    if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
      return new NamespaceError(this.name, `${tool}: connection closed during the call`, {
        cause: err,
        userText: `${agent} stopped while answering and is being restarted; please try again.`,
      });
    }
    if (err instanceof Error && err.name === "AbortError") {
      return new NamespaceError(this.name, `${tool}: cancelled`, { cause: err, userText: "Cancelled." });
    }
    return new NamespaceError(this.name, `${tool} failed: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
      userText: `${agent} could not answer (${tool} failed).`,
    });
  }

  /**
   * Waits for a connection; a (re)start happens only when the backoff allows it, and
   * every waiting caller shares that one start. A caller that would wait longer than
   * `maxWaitMs` for it gets the clear line at once.
   */
  private async ensureConnected(maxWaitMs: number): Promise<void> {
    if (this.closed) throw new NamespaceError(this.name, "namespace client is closed");
    if (this.client) return;
    if (!this.connecting) {
      const wait = this.restarts.waitMs;
      if (wait > maxWaitMs) throw this.unreachable(`restart backoff: next start in ${wait} ms`);
      this.connecting = sleep(wait)
        .then(() => this.connect())
        .finally(() => (this.connecting = undefined));
    }
    await this.connecting;
  }

  private unreachable(reason: string, cause?: unknown): NamespaceError {
    return new NamespaceError(this.name, `cannot start namespace ${this.name}: ${reason}`, {
      cause,
      userText: `The "${this.name}" agent is not reachable right now; please try again in a moment.`,
    });
  }

  private async connect(): Promise<void> {
    const transport = createTransport(this.config);
    const client = new Client({ name: "roomgate", version: "0.1.0" });
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      await this.refreshTools(client).catch((err: unknown) =>
        this.log.warn({ err }, "refreshing tools after list_changed failed"),
      );
    });
    try {
      await client.connect(transport);
      this.pipeStderr(transport);
      await this.refreshTools(client);
    } catch (err) {
      await client.close().catch(() => undefined);
      const delayMs = this.restarts.failed();
      this.log.warn({ err, delayMs }, "namespace server did not start; next start after a backoff");
      throw this.unreachable((err as Error).message, err);
    }
    client.onclose = () => this.onClosed(client);
    const info = client.getServerVersion();
    const instructions = client.getInstructions();
    this.serverAbout = {
      ...(info?.title ? { title: info.title } : {}),
      ...(info?.description ? { description: info.description } : {}),
      ...(instructions ? { instructions } : {}),
    };
    this.client = client;
    this.transport = transport;
    this.restarts.started();
    this.log.info({ tools: this.toolList.length }, "namespace connected");
  }

  private onClosed(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.transport = undefined;
    if (this.closed) return;
    const delay = this.restarts.failed();
    this.log.warn(
      { delayMs: delay, failures: this.restarts.consecutiveFailures },
      "namespace connection closed; restarting after a backoff",
    );
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.ensureConnected(Number.POSITIVE_INFINITY).catch((err: unknown) =>
        this.log.error({ err }, "namespace restart failed; will retry on next use"),
      );
    }, delay);
    this.restartTimer.unref();
  }

  private async refreshTools(client: Client): Promise<void> {
    const tools: ToolInfo[] = [];
    const readOnly = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      for (const raw of page.tools) {
        const tool = parseToolInfo(raw);
        if (tool && tool.name.startsWith(this.prefix)) tools.push(tool);
        if (tool && isReadOnly(raw)) readOnly.add(tool.name);
      }
      cursor = page.nextCursor;
    } while (cursor);
    this.toolList = tools;
    this.readOnlyTools = readOnly;
  }

  private pipeStderr(transport: Transport): void {
    const stderr = (transport as { stderr?: NodeJS.ReadableStream | null }).stderr;
    stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString().trim();
      if (text) this.log.debug({ stderr: text }, "namespace stderr");
    });
  }
}
