import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { NamespaceConfig } from "../core/config.js";
import { NamespaceError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { retry, sleep, type RetryPolicy } from "../core/retry.js";
import { namespaceCallSeconds, namespaceCalls } from "../ops/metrics.js";
import { START_WAIT_MS, answersPing, lostToCrash, timedOut } from "./call-recovery.js";
import type { CallOptions, NamespaceAbout } from "./call-options.js";
import { ElicitationRouter } from "./elicitation-router.js";
import {
  callFailure,
  causeClass,
  NamespaceCrashedTwiceError,
  NamespaceRestartingError,
  NamespaceUnreachableError,
} from "./namespace-errors.js";
import { RestartPolicy } from "./restart-policy.js";
import { NamespaceBinding } from "./namespace-binding.js";
import { DEFAULT_MAX_REPLY_BYTES } from "./reply-cap.js";
import { readAsResult, ResourceSubscriptions } from "./resource-subscriptions.js";
import { callAsTask, runsAsTask, type TaskLedger } from "./task-call.js";
import { createTransport } from "./transport.js";
import type { ToolInfo, ToolListing } from "./tool-info.js";
import { fetchToolListing } from "./tool-listing.js";

/** A call lost to a crash is sent once more, at once: reconnecting waits out the restart backoff itself. */
const CRASH_RETRY: RetryPolicy = { attempts: 2, firstMs: 0, maxMs: 0 };

/**
 * One namespace served over MCP: keeps a connection (restarting a crashed or hung
 * stdio child with exponential backoff), lists only the namespace's own tools, and
 * calls them with a timeout; a call lost to a crash is retried once when it is safe.
 */
export class NamespaceClient extends NamespaceBinding {
  private client: Client | undefined;
  private transport: Transport | undefined;
  private connecting: Promise<void> | undefined;
  private toolList: ToolInfo[] = [];
  private readOnlyTools = new Set<string>();
  private readonly elicitations = new ElicitationRouter();
  private listed: ToolListing = { all: 0, prefixed: 0, foreign: [], invalid: [] };
  /** Why the last start failed, so a caller refused during the backoff hears the same cause. */
  private lastStartFailure: NamespaceUnreachableError | undefined;
  /** Set by a crash, cleared by the next answered call: calls run one at a time meanwhile. */
  private probation = false;
  private serial: Promise<unknown> = Promise.resolve();
  private serverAbout: NamespaceAbout = {};
  private closed = false;
  private readonly restarts = new RestartPolicy();
  private restartTimer: NodeJS.Timeout | undefined;
  /** Resources the bindings watch, subscribed again on every connection. */
  readonly subscriptions: ResourceSubscriptions;
  /** Where tools run as MCP tasks keep their task ids; without it no tool runs as a task. */
  tasks: TaskLedger | undefined;

  constructor(
    name: string,
    config: NamespaceConfig,
    private readonly log: Logger,
    /** The largest reply read from the server (`limits.maxToolResultBytes`). */
    private readonly maxReplyBytes = DEFAULT_MAX_REPLY_BYTES,
  ) {
    super(name, config);
    this.subscriptions = new ResourceSubscriptions(name, log);
  }

  /** What the server listed before the prefix and the binding's patterns (for `roomgate check`). */
  get listing(): ToolListing {
    return this.listed;
  }

  /**
   * A line for the operator and the room when the server lists tools but none under
   * the prefix (a third-party server usually needs `prefix: ""`); undefined otherwise.
   */
  prefixHint(): string | undefined {
    if (this.listed.prefixed > 0 || this.listed.all === 0 || this.prefix === "") return undefined;
    return (
      `The server of "${this.name}" lists ${this.listed.all} tools, none named with the prefix "${this.prefix}". ` +
      `If the whole server is this namespace, set \`prefix: ""\` under namespaces.${this.name} in the configuration.`
    );
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

  /** Whether task tools can run here: a place for task ids, and a server that offers tasks for tool calls. */
  get runsTasks(): boolean {
    return (
      this.tasks !== undefined &&
      this.client?.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined
    );
  }

  /** Reads one of the server's resources, shaped as a tool result so it is shown as tool output is. */
  async readResource(uri: string): Promise<CallToolResult> {
    await this.ensureConnected(START_WAIT_MS);
    try {
      return await readAsResult(this.client!, uri, this.config.timeoutSeconds * 1000);
    } catch (err) {
      throw this.callError(`resources/read ${uri}`, err, this.config.timeoutSeconds * 1000);
    }
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
    const timeout = options.timeoutMs ?? this.config.timeoutSeconds * 1000;
    const timer = namespaceCallSeconds.startTimer({ namespace: this.name });
    let retried = false;
    try {
      const result = await retry(
        () =>
          this.retrySafe(tool)
            ? this.onProbation(() => this.attempt(tool, args, options, timeout))
            : this.attempt(tool, args, options, timeout),
        (err) => {
          if (lostToCrash(err)) this.probation = true;
          return lostToCrash(err) && this.retrySafe(tool) && !this.closed && !options.signal?.aborted
            ? "retry"
            : "fail";
        },
        CRASH_RETRY,
        {
          onRetry: () => {
            retried = true;
            namespaceCalls.inc({ namespace: this.name, outcome: "retried" });
            this.log.warn({ tool }, "call lost to a namespace crash; retrying once on the restarted server");
          },
        },
      );
      timer({ outcome: result.isError ? "tool_error" : "ok" });
      return result;
    } catch (err) {
      namespaceCalls.inc({ namespace: this.name, outcome: "failed" });
      timer({ outcome: "failed" });
      if (retried && lostToCrash(err)) {
        const poison = new NamespaceCrashedTwiceError(this.name, tool, err);
        this.log.warn(
          { tool, ref: poison.ref },
          "a call crashed the namespace twice; its message is set aside",
        );
        throw poison;
      }
      throw this.callError(tool, err, timeout);
    }
  }

  /**
   * After a crash, calls that may be retried run one at a time until one is answered: a
   * call that crashes the server while it is the only one in flight is the message that
   * kills it, so a retried call lost again is poison, not a bystander of another's crash.
   */
  private async onProbation<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.probation) return fn();
    const run = this.serial.then(fn, fn);
    this.serial = run.then(
      () => (this.probation = false),
      () => undefined,
    );
    return run;
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
    if (!this.toolList.some((t) => t.name === tool)) {
      // A tool outside the prefix or denied by the binding does not exist here (DESIGN §6).
      throw new NamespaceError(this.name, `${tool} is not a tool of namespace ${this.name}`, {
        userText: `${tool} is not a tool of this room's agent (${this.name}). Nothing was called.`,
      });
    }
    const info = this.toolList.find((t) => t.name === tool);
    if (options.task && this.tasks && runsAsTask(client, info)) {
      return callAsTask(
        client,
        this.tasks,
        this.name,
        tool,
        args,
        { ...options, task: options.task },
        timeout,
        this.log,
      );
    }
    const onProgress = options.onProgress;
    const unregister = options.onElicit ? this.elicitations.register(options.onElicit) : undefined;
    try {
      // The low-level request skips the SDK's own outputSchema check: roomgate
      // validates Answers itself so that a malformed one becomes a clear line.
      // An onprogress handler makes the SDK send a progressToken with every call.
      const result = await client.request(
        { method: "tools/call", params: { name: tool, arguments: args } },
        CallToolResultSchema,
        {
          timeout,
          signal: options.signal,
          resetTimeoutOnProgress: true,
          onprogress: (p) => onProgress?.({ progress: p.progress, total: p.total, message: p.message }),
        },
      );
      namespaceCalls.inc({ namespace: this.name, outcome: result.isError ? "tool_error" : "ok" });
      if (this.client === client) this.restarts.answered();
      return result;
    } catch (err) {
      if (timedOut(err)) void this.killIfHung(client, tool, timeout);
      throw err;
    } finally {
      unregister?.();
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
    const error = callFailure(this.name, tool, err, timeout, this.maxReplyBytes);
    this.log.warn({ err, tool, ref: error.ref }, "namespace call failed");
    return error;
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

  /** Refused during the restart backoff: the cause of the last failed start, with a fresh ref. */
  private unreachable(reason: string): NamespaceError {
    const last = this.lastStartFailure;
    // Never sent: the turn can wait for the restart instead of failing.
    const error = new NamespaceRestartingError(
      this.name,
      last?.reason ?? "it is restarting",
      last?.cause ?? reason,
      this.restarts.waitMs,
    );
    this.log.warn({ ref: error.ref, reason }, "namespace refused a call during its restart backoff");
    return error;
  }

  private async connect(): Promise<void> {
    const transport = createTransport(this.config, this.maxReplyBytes);
    // Form elicitation is declared so servers offer the tools that ask questions;
    // the router hands each request to the running call that can ask the room.
    const client = new Client(
      { name: "roomgate", version: "0.1.0" },
      { capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      this.elicitations.handle(request.params, extra.signal),
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      await this.refreshTools(client).catch((err: unknown) =>
        this.log.warn({ err }, "refreshing tools after list_changed failed"),
      );
    });
    try {
      await client.connect(transport, { timeout: this.config.startTimeoutSeconds * 1000 });
      this.pipeStderr(transport);
      await this.refreshTools(client);
      await this.subscriptions.attach(client);
    } catch (err) {
      await client.close().catch(() => undefined);
      const delayMs = this.restarts.failed();
      const error = new NamespaceUnreachableError(this.name, causeClass(err), err);
      this.lastStartFailure = error;
      this.log.warn(
        { err, delayMs, ref: error.ref, reason: error.reason },
        "namespace server did not start; next start after a backoff",
      );
      throw error;
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
    this.lastStartFailure = undefined;
    this.log.info({ tools: this.toolList.length }, "namespace connected");
    const hint = this.prefixHint();
    if (hint) this.log.warn({ listed: this.listed.all, prefix: this.prefix }, hint);
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
    const fetched = await fetchToolListing(client, this.prefix, this.config.tools);
    this.toolList = fetched.tools;
    this.listed = fetched.listed;
    this.readOnlyTools = fetched.readOnly;
  }

  private pipeStderr(transport: Transport): void {
    const stderr = (transport as { stderr?: NodeJS.ReadableStream | null }).stderr;
    stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString().trim();
      if (text) this.log.debug({ stderr: text }, "namespace stderr");
    });
  }
}
