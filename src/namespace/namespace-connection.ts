import type { Client, PriorDiscovery, Transport } from "@modelcontextprotocol/client";
import type { NamespaceConfig } from "../core/config.js";
import { NamespaceError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { sleep } from "../core/retry.js";
import { answersPing } from "./call-recovery.js";
import type { NamespaceAbout } from "./call-options.js";
import { createMcpClient, exitedOnProbe, isModern, revisionOf, type RevisionChoice } from "./mcp-client.js";
import { causeClass, NamespaceRestartingError, NamespaceUnreachableError } from "./namespace-errors.js";
import { RestartPolicy } from "./restart-policy.js";
import { CappedStdioTransport } from "./capped-stdio.js";
import { createTransport } from "./transport.js";

/** What the namespace does with each fresh MCP client: its handlers, and what must work before it is used. */
export interface ConnectionHooks {
  /** Registers the client's request and notification handlers, before it connects. */
  prepare(client: Client): void;
  /** Runs on the connected client before anyone uses it (listing, subscriptions); a throw fails the start. */
  ready(client: Client): Promise<void>;
  /** The client is in use. */
  connected(): void;
}

/**
 * One namespace's MCP connection and its restart policy: starts the server (a stdio
 * child or an HTTP endpoint), restarts it after a crash or a hang with exponential
 * backoff, and lets every waiting caller share one start.
 */
export class NamespaceConnection {
  private client: Client | undefined;
  private transport: Transport | undefined;
  private connecting: Promise<void> | undefined;
  /** Why the last start failed, so a caller refused during the backoff hears the same cause. */
  private lastStartFailure: NamespaceUnreachableError | undefined;
  private serverAbout: NamespaceAbout = {};
  private isClosed = false;
  private readonly restarts = new RestartPolicy();
  private restartTimer: NodeJS.Timeout | undefined;
  /** The revision the first start found, so that a restart skips the probe. */
  private verdict: PriorDiscovery | undefined;

  constructor(
    private readonly name: string,
    private readonly config: NamespaceConfig,
    private readonly log: Logger,
    /** The largest reply read from the server (`limits.maxToolResultBytes`). */
    private readonly maxReplyBytes: number,
    private readonly hooks: ConnectionHooks,
    /** The revisions the connection may use: by default the newest both sides speak. */
    private readonly revision: RevisionChoice = "newest",
  ) {}

  /** The connected client, if there is one now. */
  get current(): Client | undefined {
    return this.client;
  }

  /** True once `close` was called: nothing restarts any more. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** What the server said about itself when it was last connected. */
  get about(): NamespaceAbout {
    return this.serverAbout;
  }

  /** Process id of the stdio child, when there is one (tests kill it to check restarts). */
  get pid(): number | null {
    const t = this.transport as { pid?: number | null } | undefined;
    return t?.pid ?? null;
  }

  /**
   * Waits for a connection; a (re)start happens only when the backoff allows it, and
   * every waiting caller shares that one start. A caller that would wait longer than
   * `maxWaitMs` for it gets the clear line at once.
   */
  async ensureConnected(maxWaitMs: number): Promise<Client> {
    if (this.isClosed) throw new NamespaceError(this.name, "namespace client is closed");
    if (this.client) return this.client;
    if (!this.connecting) {
      const wait = this.restarts.waitMs;
      if (wait > maxWaitMs) throw this.unreachable(`restart backoff: next start in ${wait} ms`);
      this.connecting = sleep(wait)
        .then(() => this.connect())
        .finally(() => (this.connecting = undefined));
    }
    await this.connecting;
    // A crash right after the start leaves no client: the caller sees the closed connection.
    if (!this.client) throw new NamespaceError(this.name, "namespace connection closed as it started");
    return this.client;
  }

  /** A call on `client` was answered: the server works, so its next crash starts the backoff over. */
  answered(client: Client): void {
    if (this.client === client) this.restarts.answered();
  }

  /** After a timeout: a server that no longer answers a ping is hung; kill it so it restarts. */
  async killIfHung(client: Client, tool: string, timeout: number): Promise<void> {
    if (await answersPing(client, timeout)) return;
    if (this.client !== client || this.isClosed) return;
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
    this.isClosed = true;
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
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
    const timeout = this.config.startTimeoutSeconds * 1000;
    // The probe for the newest revision waits as long as a start may take: a stdio server
    // silent to it is taken for a 2025-11-25 one, and a slow one must not be taken for that.
    const client = createMcpClient(this.revision, timeout);
    this.hooks.prepare(client);
    try {
      await client.connect(transport, { timeout, ...(this.verdict ? { prior: this.verdict } : {}) });
      this.pipeStderr(transport);
      await this.hooks.ready(client);
    } catch (err) {
      await client.close().catch(() => undefined);
      if (transport instanceof CappedStdioTransport) transport.stop();
      if (this.revision === "newest" && !this.verdict && exitedOnProbe(err)) {
        // Some stdio servers (rmcp's, for one) exit on any request before `initialize`.
        this.log.info("the server exited on the revision probe; starting it again as a 2025-11-25 server");
        this.verdict = { kind: "legacy" };
        return this.connect();
      }
      // The server may have changed (an upgrade, another URL): the next start probes again.
      this.verdict = undefined;
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
    this.remember(client);
    const info = client.getServerVersion();
    const instructions = client.getInstructions();
    this.serverAbout = {
      ...(info?.title ? { title: info.title } : {}),
      ...(info?.description ? { description: info.description } : {}),
      ...(instructions ? { instructions } : {}),
      revision: revisionOf(client),
      extensions: Object.keys(client.getServerCapabilities()?.extensions ?? {}),
    };
    this.log.info({ revision: revisionOf(client) }, "namespace speaks MCP revision");
    this.client = client;
    this.transport = transport;
    this.restarts.started();
    this.lastStartFailure = undefined;
    this.hooks.connected();
  }

  /**
   * Keeps the revision the server was found to speak, for its restarts: the same
   * server restarted speaks the same revision, and the probe (a second stdio process,
   * or a request over HTTP) is paid once per roomgate process.
   */
  private remember(client: Client): void {
    if (this.revision !== "newest" || this.verdict) return;
    const discover = client.getDiscoverResult();
    this.verdict = isModern(client) && discover ? { kind: "modern", discover } : { kind: "legacy" };
  }

  private onClosed(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.transport = undefined;
    if (this.isClosed) return;
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

  private pipeStderr(transport: Transport): void {
    const stderr = (transport as { stderr?: NodeJS.ReadableStream | null }).stderr;
    stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString().trim();
      if (text) this.log.debug({ stderr: text }, "namespace stderr");
    });
  }
}
