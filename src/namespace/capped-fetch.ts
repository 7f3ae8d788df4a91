import { replyTooLarge, requestIds } from "./reply-cap.js";

/** Most of an error status's body kept: it only goes into an error message. */
const ERROR_BODY_BYTES = 4_096;

type Fetch = typeof fetch;

function idsOf(body: unknown): (string | number)[] {
  if (typeof body !== "string") return [];
  try {
    return requestIds(JSON.parse(body));
  } catch {
    return [];
  }
}

function mediaType(response: Response): string {
  return (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

function rebuilt(response: Response, body: ConstructorParameters<typeof Response>[0]): Response {
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** Reads at most `maxBytes` of a body; undefined when it is longer (the rest is never read). */
async function readCapped(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** The first `maxBytes` of a stream, then its end. */
function truncated(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  let left = maxBytes;
  const reader = body.getReader();
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done || left <= 0) {
        await reader.cancel().catch(() => undefined);
        return controller.close();
      }
      controller.enqueue(value.subarray(0, left));
      left -= value.byteLength;
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * Splits a server-sent event stream into whole events and passes each on only once
 * it is complete and no longer than `maxBytes`. An event over the cap is dropped
 * unread: the requests the stream answers get an error reply in its place and the
 * stream ends; on the standalone stream (no request) it is skipped to the next event.
 */
export class SseEventCap extends TransformStream<Uint8Array, Uint8Array> {
  constructor(maxBytes: number, ids: (string | number)[]) {
    let pending: Uint8Array[] = [];
    let pendingSize = 0;
    let lineEmpty = true;
    let afterCR = false;
    let skipping = false;
    const encoder = new TextEncoder();
    /** An event over the cap: its requests get the stand-in error and the stream ends (true), or it is skipped. */
    const overflow = (controller: TransformStreamDefaultController<Uint8Array>): boolean => {
      pending = [];
      pendingSize = 0;
      if (ids.length === 0) {
        skipping = true;
        return false;
      }
      for (const id of ids) {
        const data = JSON.stringify(replyTooLarge(id, maxBytes));
        controller.enqueue(encoder.encode(`event: message\ndata: ${data}\n\n`));
      }
      controller.terminate();
      return true;
    };
    super({
      transform(chunk, controller) {
        let start = 0;
        for (let i = 0; i < chunk.length; i++) {
          const b = chunk[i]!;
          if (b === 0x0a && afterCR) {
            afterCR = false;
            continue;
          }
          afterCR = b === 0x0d;
          if (b !== 0x0a && b !== 0x0d) {
            lineEmpty = false;
            continue;
          }
          if (!lineEmpty) {
            lineEmpty = true;
            continue;
          }
          // A blank line: the event ends here.
          const tail = chunk.subarray(start, i + 1);
          start = i + 1;
          if (skipping) {
            skipping = false;
          } else if (pendingSize + tail.byteLength > maxBytes) {
            if (overflow(controller)) return;
            skipping = false;
          } else {
            for (const part of pending) controller.enqueue(part);
            controller.enqueue(tail);
          }
          pending = [];
          pendingSize = 0;
        }
        if (skipping || start >= chunk.length) return;
        const rest = chunk.subarray(start);
        pending.push(rest);
        pendingSize += rest.byteLength;
        if (pendingSize > maxBytes) overflow(controller);
      },
      flush(controller) {
        if (!skipping) for (const part of pending) controller.enqueue(part);
      },
    });
  }
}

/**
 * A fetch for the Streamable HTTP transport that never reads a namespace reply past
 * `maxBytes` (DESIGN §9): a JSON reply over the cap is replaced by an error reply for
 * the requests it answers, each server-sent event is capped on its own, and an error
 * status's body is cut to a few KB.
 */
export function cappedFetch(maxBytes: number, base: Fetch = fetch): Fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (!response.body) return response;
    if (!response.ok) return rebuilt(response, truncated(response.body, ERROR_BODY_BYTES));
    const ids = idsOf(init?.body);
    const type = mediaType(response);
    if (type === "text/event-stream")
      return rebuilt(response, response.body.pipeThrough(new SseEventCap(maxBytes, ids)));
    if (type !== "application/json") return response;
    const bytes = await readCapped(response.body, maxBytes);
    if (bytes !== undefined) return rebuilt(response, bytes);
    return rebuilt(response, JSON.stringify(ids.map((id) => replyTooLarge(id, maxBytes))));
  };
}
