import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

/** Longest a call waits for a namespace server that is being (re)started. */
export const START_WAIT_MS = 5_000;

/**
 * True for a call that was in flight when the server's connection closed (a crashed
 * or killed child): the server may or may not have run it.
 */
export function lostToCrash(err: unknown): boolean {
  return err instanceof McpError && err.code === ErrorCode.ConnectionClosed;
}

/** True when the call ran out of time waiting for the server's answer. */
export function timedOut(err: unknown): boolean {
  return err instanceof McpError && err.code === ErrorCode.RequestTimeout;
}

/** True when a raw `tools/list` entry says the tool changes nothing (`annotations.readOnlyHint`). */
export function isReadOnly(raw: unknown): boolean {
  const annotations = (raw as { annotations?: { readOnlyHint?: unknown } } | null)?.annotations;
  return annotations?.readOnlyHint === true;
}

/**
 * After a call timed out: does the server still answer a ping? A server that is
 * only slow at one tool answers; a hung one (a spinning event loop, a stuck pipe)
 * does not, and must be killed and restarted.
 */
export async function answersPing(client: Client, callTimeoutMs: number): Promise<boolean> {
  try {
    await client.ping({ timeout: Math.max(1_000, Math.min(callTimeoutMs, START_WAIT_MS)) });
    return true;
  } catch (err) {
    // A connection that closed meanwhile is already being restarted: nothing to kill.
    return lostToCrash(err);
  }
}
