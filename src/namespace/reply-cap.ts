import { ProtocolError, type JSONRPCMessage } from "@modelcontextprotocol/client";

/** Default of `limits.maxToolResultBytes`: the largest namespace reply read (DESIGN §9). */
export const DEFAULT_MAX_REPLY_BYTES = 20_000_000;

/**
 * JSON-RPC error code of the reply a transport puts in place of one that was larger
 * than the cap (in the range JSON-RPC leaves to implementations); the call that was
 * waiting for it fails with this code instead of reading the rest.
 */
export const REPLY_TOO_LARGE = -32_090;

/** A byte count for people: "20 MB", "1.5 MB", "900 KB". */
export function formatBytes(bytes: number): string {
  if (bytes >= 1_000_000) return `${Number((bytes / 1_000_000).toFixed(1))} MB`;
  if (bytes >= 1_000) return `${Number((bytes / 1_000).toFixed(1))} KB`;
  return `${bytes} bytes`;
}

/** The error response that stands in for an oversized reply to request `id`. */
export function replyTooLarge(id: string | number, maxBytes: number): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: REPLY_TOO_LARGE,
      message: `the reply was larger than ${maxBytes} bytes (limits.maxToolResultBytes) and was not read`,
      data: { maxBytes },
    },
  };
}

/** True for a call that failed because its reply was over the cap. */
export function isReplyTooLarge(err: unknown): err is ProtocolError {
  return err instanceof ProtocolError && err.code === REPLY_TOO_LARGE;
}

/** Ids of the requests in a JSON-RPC body (one message or a batch); the replies a cap stands in for. */
export function requestIds(messages: unknown): (string | number)[] {
  const list = Array.isArray(messages) ? messages : [messages];
  return list.flatMap((m) => {
    const r = m as { method?: unknown; id?: unknown } | null;
    return r && typeof r.method === "string" && (typeof r.id === "string" || typeof r.id === "number")
      ? [r.id]
      : [];
  });
}

/**
 * Finds the id of a JSON-RPC message from the first bytes of its text (servers write
 * `"id"` before the result), so an oversized reply can be failed without reading it.
 */
export function sniffId(head: string): string | number | undefined {
  const match = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")/.exec(head);
  if (!match) return undefined;
  const raw = match[1]!;
  return raw.startsWith('"') ? (JSON.parse(raw) as string) : Number(raw);
}
