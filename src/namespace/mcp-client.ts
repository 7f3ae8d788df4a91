import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type JSONRPCErrorResponse,
  type JSONRPCResponse,
  type VersionNegotiationOptions,
} from "@modelcontextprotocol/client";

/** The MCP revisions roomgate speaks, newest first: 2026-07-28 when the server offers it. */
export const MODERN_REVISION = "2026-07-28";
export const LEGACY_REVISION = "2025-11-25";

/** Which revision a connection may use: the newest both sides speak, or exactly one (`roomgate check`). */
export type RevisionChoice = "newest" | typeof MODERN_REVISION | typeof LEGACY_REVISION;

/**
 * The Tasks extension (SEP-2663) on 2026-07-28: a client that declares it lets the
 * server answer any `tools/call` with a task handle (`resultType: "task"`).
 */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/**
 * JSON-RPC error code of the error that stands in for a `resultType: "task"` reply:
 * the SDK takes no such result, so the client turns it into this error, whose `data`
 * is the server's CreateTaskResult, and the call follows the task from there.
 */
export const TASK_HANDLE = -32_091;

/** The SDK client with one addition: a task handle reaches the caller (as a TASK_HANDLE error). */
export class RoomgateMcpClient extends Client {
  // The SDK's documented seam for responses it cannot decode itself (its own Client
  // overrides it the same way for subscriptions/listen); everything else goes on to it.
  protected override _onresponse(response: JSONRPCResponse | JSONRPCErrorResponse): void {
    const result = "result" in response ? (response.result as { resultType?: unknown }) : undefined;
    if (result?.resultType !== "task") return super._onresponse(response);
    super._onresponse({
      jsonrpc: "2.0",
      id: response.id,
      error: { code: TASK_HANDLE, message: "the server answered with a task", data: result },
    });
  }
}

/** True for a call the server answered with a task handle; its `data` is the CreateTaskResult. */
export function isTaskHandle(err: unknown): err is ProtocolError {
  return err instanceof ProtocolError && err.code === TASK_HANDLE;
}

/** The SDK's negotiation for a choice: probe and fall back, or one revision only. */
function negotiation(choice: RevisionChoice, probeMs: number): VersionNegotiationOptions {
  if (choice === LEGACY_REVISION) return { mode: "legacy" };
  if (choice === MODERN_REVISION) return { mode: { pin: MODERN_REVISION }, probe: { timeoutMs: probeMs } };
  // A stdio server that stays silent to the probe is taken for a 2025 one after probeMs.
  return { mode: "auto", probe: { timeoutMs: probeMs } };
}

/**
 * A fresh client for one connection. It declares form elicitation (servers offer the
 * tools that ask questions; the room answers them) and the Tasks extension, and asks
 * the server's `input_required` questions itself, one call at a time, so that each
 * question reaches the room of the call that caused it.
 */
export function createMcpClient(choice: RevisionChoice, probeMs: number): RoomgateMcpClient {
  return new RoomgateMcpClient(
    { name: "roomgate", version: "0.1.0" },
    {
      capabilities: { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } },
      versionNegotiation: negotiation(choice, probeMs),
      inputRequired: { autoFulfill: false },
    },
  );
}

/** The revision a connected client speaks, e.g. "2026-07-28". */
export function revisionOf(client: Client): string {
  return client.getNegotiatedProtocolVersion() ?? LEGACY_REVISION;
}

/** True when the connection speaks 2026-07-28 (no sessions, input_required, subscriptions/listen). */
export function isModern(client: Client): boolean {
  return client.getProtocolEra() === "modern";
}

/**
 * True when a start failed because the stdio server closed the connection while it was
 * being probed for its revision: it exits on any request before `initialize`, as a
 * 2025-11-25 server may. (The SDK says so only in its message; its code is shared with
 * other failures of the probe.)
 */
export function exitedOnProbe(err: unknown): boolean {
  return (
    err instanceof SdkError &&
    err.code === SdkErrorCode.EraNegotiationFailed &&
    /connection closed during the server\/discover probe/.test(err.message)
  );
}
