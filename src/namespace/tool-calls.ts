import { specTypeSchemas, type CallToolResult } from "@modelcontextprotocol/client";
import { NamespaceError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { retry, type RetryPolicy } from "../core/retry.js";
import { namespaceCallSeconds, namespaceCalls } from "../ops/metrics.js";
import { START_WAIT_MS, lostToCrash, timedOut } from "./call-recovery.js";
import { CallGuard, type CallTimes } from "./call-guard.js";
import type { CallOptions } from "./call-options.js";
import type { ElicitationRouter } from "./elicitation-router.js";
import { callWithInputRounds } from "./input-rounds.js";
import { isModern, isTaskHandle } from "./mcp-client.js";
import { callFailure, NamespaceCrashedTwiceError } from "./namespace-errors.js";
import { NamespaceLimitError } from "./namespace-limits.js";
import type { NamespaceConnection } from "./namespace-connection.js";
import { readAsResult } from "./resource-subscriptions.js";
import { callAsTask, runsAsTask, type TaskLedger } from "./task-call.js";
import { followTaskHandle, resumeExtensionTask, taskHandle } from "./task-extension.js";
import type { ToolCatalog } from "./tool-catalog.js";

/** A call lost to a crash is sent once more, at once: reconnecting waits out the restart backoff itself. */
const CRASH_RETRY: RetryPolicy = { attempts: 2, firstMs: 0, maxMs: 0 };

/** What a namespace's calls need from the rest of the namespace. */
export interface ToolCallsParts {
  name: string;
  connection: NamespaceConnection;
  catalog: ToolCatalog;
  elicitations: ElicitationRouter;
  log: Logger;
  /** The namespace's router tool (deterministic by contract, so safe to send twice); null without one. */
  askTool: string | null;
  /** The default timeout of a call (`timeoutSeconds`). */
  timeoutMs: number;
  /** The longest a call may run while it sends progress (`maxCallSeconds`); unset: `timeoutMs`. */
  maxCallMs: number | undefined;
  /** The largest reply read from the server, named in the line of a reply that was too large. */
  maxReplyBytes: number;
  /** Where task tools keep their task ids, when the namespace has one. */
  tasks: () => TaskLedger | undefined;
}

/**
 * The calls of one namespace: each with a timeout, progress and the room's answers to
 * the server's questions; a call lost to a crash sent once more when that is safe, and
 * after a crash, calls run one at a time until one is answered (probation).
 */
export class ToolCalls {
  /** Set by a crash, cleared by the next answered call: calls run one at a time meanwhile. */
  private probation = false;
  private serial: Promise<unknown> = Promise.resolve();

  constructor(private readonly parts: ToolCallsParts) {}

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
    const { name, log, connection } = this.parts;
    const timeout = options.timeoutMs ?? this.parts.timeoutMs;
    const timer = namespaceCallSeconds.startTimer({ namespace: name });
    let retried = false;
    try {
      const result = await retry(
        () =>
          this.retrySafe(tool)
            ? this.onProbation(() => this.attempt(tool, args, options, timeout))
            : this.attempt(tool, args, options, timeout),
        (err) => {
          if (lostToCrash(err)) this.probation = true;
          return lostToCrash(err) && this.retrySafe(tool) && !connection.closed && !options.signal?.aborted
            ? "retry"
            : "fail";
        },
        CRASH_RETRY,
        {
          onRetry: () => {
            retried = true;
            namespaceCalls.inc({ namespace: name, outcome: "retried" });
            log.warn({ tool }, "call lost to a namespace crash; retrying once on the restarted server");
          },
        },
      );
      timer({ outcome: result.isError ? "tool_error" : "ok" });
      return result;
    } catch (err) {
      namespaceCalls.inc({ namespace: name, outcome: "failed" });
      timer({ outcome: "failed" });
      if (retried && lostToCrash(err)) {
        const poison = new NamespaceCrashedTwiceError(name, tool, err);
        log.warn({ tool, ref: poison.ref }, "a call crashed the namespace twice; its message is set aside");
        throw poison;
      }
      throw this.failure(tool, err, timeout);
    }
  }

  /** Reads one of the server's resources, shaped as a tool result so it is shown as tool output is. */
  async readResource(uri: string): Promise<CallToolResult> {
    const client = await this.parts.connection.ensureConnected(START_WAIT_MS);
    try {
      return await readAsResult(client, uri, this.parts.timeoutMs);
    } catch (err) {
      throw this.failure(`resources/read ${uri}`, err, this.parts.timeoutMs);
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
    return tool === this.parts.askTool || this.parts.catalog.isReadOnly(tool);
  }

  private async attempt(
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions,
    timeout: number,
  ): Promise<CallToolResult> {
    const { name, connection, catalog, log } = this.parts;
    const client = await connection.ensureConnected(Math.min(timeout, START_WAIT_MS));
    const info = catalog.find(tool);
    if (!info) {
      // A tool outside the prefix or denied by the binding does not exist here (DESIGN §6).
      throw new NamespaceError(name, `${tool} is not a tool of namespace ${name}`, {
        userText: `${tool} is not a tool of this room's agent (${name}). Nothing was called.`,
      });
    }
    const ledger = this.parts.tasks();
    const owner = { namespace: name, tool, log };
    const modern = isModern(client);
    // Tasks run as long as they need: they are followed outside the call's guard.
    if (!modern && options.task && ledger && runsAsTask(client, info)) {
      return callAsTask(client, ledger, owner, args, options, timeout);
    }
    const resumed = modern ? await resumeExtensionTask(client, ledger, owner, options, timeout) : undefined;
    if (resumed) return resumed;
    const times = this.times(timeout);
    const guard = new CallGuard(name, tool, log, times, options.signal);
    const onProgress = guard.progress(options.onProgress);
    const onElicit = options.onElicit ? guard.questions(options.onElicit) : undefined;
    // 2025-11-25 servers push their questions: the router hands them to this call.
    const unregister = onElicit && !modern ? this.parts.elicitations.register(onElicit) : undefined;
    let handle: unknown;
    try {
      const limits = {
        timeout: times.idleMs,
        signal: guard.signal,
        // Progress extends a call only when the binding allows it more time than its timeout.
        resetTimeoutOnProgress: times.totalMs > times.idleMs,
      };
      // The low-level request skips the SDK's own outputSchema check: roomgate
      // validates Answers itself so that a malformed one becomes a clear line.
      // An onprogress handler makes the SDK send a progressToken with every call.
      const result = modern
        ? await callWithInputRounds(
            client,
            name,
            { name: tool, arguments: args },
            { signal: guard.signal, onProgress, onElicit },
            limits,
          )
        : await client.request(
            { method: "tools/call", params: { name: tool, arguments: args } },
            specTypeSchemas.CallToolResult,
            {
              ...limits,
              onprogress: (p) => onProgress({ progress: p.progress, total: p.total, message: p.message }),
            },
          );
      namespaceCalls.inc({ namespace: name, outcome: result.isError ? "tool_error" : "ok" });
      connection.answered(client);
      return result;
    } catch (err) {
      if (!isTaskHandle(err)) {
        if (timedOut(err)) void connection.killIfHung(client, tool, timeout);
        // A call ended by a limit fails with that limit's line, not as a cancelled call.
        const reason: unknown = guard.signal.reason;
        if (reason instanceof NamespaceLimitError && !options.signal?.aborted) throw reason;
        throw err;
      }
      // The server answered with a task (2026-07-28, the Tasks extension): followed below.
      connection.answered(client);
      handle = err.data;
    } finally {
      guard.finish(options.onProgress);
      unregister?.();
    }
    return followTaskHandle(client, ledger, owner, taskHandle(name, tool, handle), options, timeout);
  }

  /** How long a call may take: its timeout without progress, and up to `maxCallSeconds` with it. */
  private times(timeoutMs: number): CallTimes {
    return { idleMs: timeoutMs, totalMs: Math.max(timeoutMs, this.parts.maxCallMs ?? timeoutMs) };
  }

  /** The NamespaceError for a failed call or read, logged with its ref. */
  private failure(tool: string, err: unknown, timeout: number): NamespaceError {
    if (err instanceof NamespaceError) return err;
    const error = callFailure(this.parts.name, tool, err, timeout, this.parts.maxReplyBytes);
    this.parts.log.warn({ err, tool, ref: error.ref }, "namespace call failed");
    return error;
  }
}
