import { FileFetchError } from "../core/errors.js";
import type { InboundFile } from "../core/event.js";
import type { TurnContext } from "./turn-context.js";

/** Without configured limits: the configuration's own defaults. */
const DEFAULTS = {
  maxBytes: 1_000_000,
  timeoutMs: 20_000,
  types: ["image/*", "audio/*", "text/*", "application/pdf"],
} as const;

/** The file limits of the turn: the most read, how long, and the media types let through. */
export function fileLimits(ctx: TurnContext): {
  maxBytes: number;
  timeoutMs: number;
  types: readonly string[];
} {
  return ctx.settings.files ?? DEFAULTS;
}

/** Whether a media type is on the allow-list (`image/*` or an exact `application/pdf`). */
export function typeAllowed(mime: string, types: readonly string[]): boolean {
  const [major] = mime.toLowerCase().split("/");
  return types.some((t) => {
    const pattern = t.toLowerCase();
    return pattern.endsWith("/*") ? pattern.slice(0, -2) === major : pattern === mime.toLowerCase();
  });
}

/**
 * The file's bytes: the text the adapter already read, or fetched from the platform
 * now, after the edge, the flood check and the worker's own check let the turn in, and
 * only because a tool takes it. Throws FileFetchError with the person's line.
 */
export async function fileBytes(ctx: TurnContext, file: InboundFile): Promise<Uint8Array> {
  if (file.text !== undefined) return new TextEncoder().encode(file.text);
  if (file.ref === undefined) {
    throw new FileFetchError("the file has no platform handle", {
      userText: "The file could not be read; please send it again.",
    });
  }
  const { maxBytes, timeoutMs } = fileLimits(ctx);
  return ctx.channel.fetchFile(file, { maxBytes, timeoutMs });
}
