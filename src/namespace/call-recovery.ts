import { SdkError, SdkErrorCode, type Client } from "@modelcontextprotocol/client";
import { isModern } from "./mcp-client.js";

/** Longest a call waits for a namespace server that is being (re)started. */
export const START_WAIT_MS = 5_000;

/**
 * True for a call that was in flight when the server's connection closed (a crashed
 * or killed child): the server may or may not have run it.
 */
export function lostToCrash(err: unknown): boolean {
  return err instanceof SdkError && err.code === SdkErrorCode.ConnectionClosed;
}

/** True when the call ran out of time waiting for the server's answer. */
export function timedOut(err: unknown): boolean {
  return err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout;
}

/** True when a raw `tools/list` entry says the tool changes nothing (`annotations.readOnlyHint`). */
export function isReadOnly(raw: unknown): boolean {
  const annotations = (raw as { annotations?: { readOnlyHint?: unknown } } | null)?.annotations;
  return annotations?.readOnlyHint === true;
}

/**
 * After a call timed out: does the server still answer? A server that is only slow
 * at one tool answers; a hung one (a spinning event loop, a stuck pipe) does not, and
 * must be killed and restarted. 2026-07-28 has no ping: `server/discover` asks instead.
 */
export async function answersPing(client: Client, callTimeoutMs: number): Promise<boolean> {
  const options = { timeout: Math.max(1_000, Math.min(callTimeoutMs, START_WAIT_MS)) };
  try {
    await (isModern(client) ? client.discover(options) : client.ping(options));
    return true;
  } catch (err) {
    // A connection that closed meanwhile is already being restarted: nothing to kill.
    return lostToCrash(err);
  }
}
