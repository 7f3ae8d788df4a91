/** A body grew past its cap while being read; the read was stopped there. */
export class TooLargeError extends Error {
  constructor(readonly bytesRead: number) {
    super(`body larger than allowed (stopped after ${bytesRead} bytes)`);
    this.name = "TooLargeError";
  }
}

/**
 * Reads a fetch response body but never more than `maxBytes`: the count is checked
 * chunk by chunk while reading, so a sender's claimed size is never what protects
 * memory. Over the cap, the stream is cancelled and TooLargeError thrown.
 */
export async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new TooLargeError(total);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
