import { randomBytes } from "node:crypto";
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
} from "@modelcontextprotocol/client";
import { NamespaceError } from "../core/errors.js";
import { NamespaceLimitError } from "./namespace-limits.js";
import { formatBytes, isReplyTooLarge } from "./reply-cap.js";

/** Why a namespace could not be reached, in words a person can read without internals. */
export function causeClass(err: unknown): string {
  if (err instanceof NamespaceLimitError) return err.reason;
  // A revision probe that failed on the way (refused, unreachable) carries that failure.
  if (err instanceof SdkError && err.code === SdkErrorCode.EraNegotiationFailed && err.cause !== undefined) {
    return causeClass(err.cause);
  }
  const e = err as { code?: unknown; cause?: { code?: unknown }; name?: unknown; message?: unknown };
  const code = typeof e?.code === "string" ? e.code : typeof e?.cause?.code === "string" ? e.cause.code : "";
  switch (code) {
    case "ENOENT":
      return "its command was not found";
    case "EACCES":
      return "its command may not be run";
    case "ECONNREFUSED":
      return "the connection was refused";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "its host name does not resolve";
    case "ECONNRESET":
      return "the connection was reset";
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return "the connection timed out";
  }
  if (err instanceof SdkHttpError) {
    const status = err.status;
    if (status === 401 || status === 403) return `it refused the credentials (HTTP ${status})`;
    return `its URL answered HTTP ${status}`;
  }
  if (err instanceof SdkError && err.code === SdkErrorCode.ConnectionClosed) return "it exited at start";
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout)
    return "it did not answer at start";
  if (
    (err instanceof SdkError && err.code === SdkErrorCode.EraNegotiationFailed) ||
    (err instanceof ProtocolError && err.code === ProtocolErrorCode.UnsupportedProtocolVersion)
  ) {
    return "it does not speak that MCP revision";
  }
  if (typeof e?.message === "string" && /fetch failed/i.test(e.message)) return "its URL cannot be reached";
  return "it failed at start";
}

/**
 * A namespace that cannot be started or reached: `cause` names the class (`it exited
 * at start`), `ref` ties the person's line to the log entry with the details.
 */
export class NamespaceUnreachableError extends NamespaceError {
  readonly ref: string;
  constructor(
    namespace: string,
    readonly reason: string,
    cause: unknown,
    ref = randomBytes(4).toString("hex"),
  ) {
    super(
      namespace,
      `cannot start namespace ${namespace}: ${reason}: ${(cause as Error)?.message ?? String(cause)}`,
      {
        cause,
        userText: `${namespace} is not reachable (${reason}); the operator has the details (ref ${ref}).`,
      },
    );
    this.ref = ref;
  }
}

/**
 * A call refused while the namespace waits out its restart backoff: it was never sent,
 * so the turn waits for the restart (`waitMs`) instead of telling the person it failed.
 */
export class NamespaceRestartingError extends NamespaceUnreachableError {
  readonly interruptsTurn = true;
  constructor(
    namespace: string,
    reason: string,
    cause: unknown,
    readonly waitMs: number,
  ) {
    super(namespace, reason, cause);
  }
}

/**
 * The same call crashed the namespace server twice (once, then on the restarted server):
 * the message itself is what kills it, so the turn is set aside, not tried again.
 */
export class NamespaceCrashedTwiceError extends NamespaceError {
  readonly interruptsTurn = true;
  constructor(
    namespace: string,
    tool: string,
    cause: unknown,
    readonly ref = randomBytes(4).toString("hex"),
  ) {
    super(namespace, `${tool} crashed the namespace server twice`, {
      cause,
      userText:
        `This message made ${namespace} stop twice, so it was set aside: the other conversations go on, ` +
        `and an operator can look at it (ref ${ref}).`,
    });
  }
}

function mcpReason(err: ProtocolError | SdkError): string {
  switch (err.code) {
    case ProtocolErrorCode.InvalidParams:
      return "it rejected the arguments";
    case ProtocolErrorCode.MethodNotFound:
      return "it does not support that request";
    case ProtocolErrorCode.MissingRequiredClientCapability: {
      // A 2026-07-28 server that needs what roomgate does not declare (sampling, roots).
      const needs =
        err instanceof MissingRequiredClientCapabilityError ? Object.keys(err.requiredCapabilities) : [];
      return `it needs ${needs.length > 0 ? needs.join(" and ") : "something"} from the client, which a chat cannot give`;
    }
    case SdkErrorCode.InvalidResult:
      return "its reply was malformed";
    default:
      return "it answered with an error";
  }
}

/**
 * A failed call in words a person can read, naming the cause class (timed out,
 * exited, rejected) and a ref for the log entry with the details.
 */
export function callFailure(
  namespace: string,
  tool: string,
  err: unknown,
  timeoutMs: number,
  maxReplyBytes: number,
): NamespaceError & { ref: string } {
  const ref = randomBytes(4).toString("hex");
  const details = `(ref ${ref})`;
  const make = (message: string, userText: string) =>
    Object.assign(new NamespaceError(namespace, message, { cause: err, userText }), { ref });
  if (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout) {
    return make(
      `${tool} timed out after ${timeoutMs} ms`,
      `${namespace} did not answer in time (${tool} timed out after ${timeoutMs} ms); please try again ${details}.`,
    );
  }
  if (err instanceof SdkError && err.code === SdkErrorCode.ConnectionClosed) {
    return make(
      `${tool}: connection closed during the call`,
      `${namespace} stopped while answering (it exited during ${tool}) and is being restarted; the operator has the details ${details}.`,
    );
  }
  if (isReplyTooLarge(err)) {
    return make(
      `${tool}: reply over limits.maxToolResultBytes (${maxReplyBytes} bytes); not read`,
      `The reply of ${namespace} to ${tool} was larger than ${formatBytes(maxReplyBytes)}, so it was not read ` +
        `(the operator's limit, limits.maxToolResultBytes) ${details}.`,
    );
  }
  if (err instanceof Error && err.name === "AbortError") {
    return make(`${tool}: cancelled`, "Cancelled.");
  }
  const reason =
    err instanceof ProtocolError || (err instanceof SdkError && err.code === SdkErrorCode.InvalidResult)
      ? mcpReason(err)
      : causeClass(err);
  return make(
    `${tool} failed: ${(err as Error)?.message ?? String(err)}`,
    `${namespace} could not run ${tool} (${reason}); the operator has the details ${details}.`,
  );
}
