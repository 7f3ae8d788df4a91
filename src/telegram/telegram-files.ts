import type { Api } from "grammy";
import type { FileLimits } from "../core/adapter.js";
import { FileFetchError } from "../core/errors.js";
import type { InboundFile } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { readCapped, TooLargeError } from "../edge/capped-read.js";
import { edgeTexts } from "../edge/edge-texts.js";
import { loggableError, safeCause } from "./loggable-error.js";

/** The Bot API serves files up to this size through getFile; larger ones cannot be fetched at all. */
export const DOWNLOAD_MAX_BYTES = 20 * 1024 * 1024;

/** Where the Bot API serves a bot's files: `<apiRoot>/file/bot<token>`. */
export function fileRootOf(apiRoot: string | undefined, token: string): string {
  return `${(apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "")}/file/bot${token}`;
}

/**
 * Downloads a file by its file_id through getFile, never reading more than `maxBytes`:
 * the size is checked from getFile's `file_size`, then while reading. TooLargeError
 * when it is over; the read is bounded by `signal`.
 */
export async function downloadTelegramFile(
  api: Api,
  fileRoot: string,
  fileId: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Uint8Array> {
  // grammY types its signal with the abort-controller package; the platform's is the same at run time.
  const file = await api.getFile(fileId, signal as unknown as Parameters<Api["getFile"]>[1]);
  if (file.file_size !== undefined && file.file_size > maxBytes) throw new TooLargeError(file.file_size);
  if (file.file_path === undefined) throw new Error("getFile returned no file_path");
  const res = await fetch(`${fileRoot}/${file.file_path}`, { signal });
  if (!res.ok) throw new Error(`file download answered HTTP ${res.status}`);
  return readCapped(res.body, maxBytes);
}

/**
 * Fetches a file the person sent (its file_id) for the tool that takes it, within the
 * limits; every failure is a FileFetchError whose line says what went wrong.
 */
export async function fetchFileForTool(
  api: Api,
  fileRoot: string,
  file: InboundFile,
  limits: FileLimits,
  log: Logger,
): Promise<Uint8Array> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  try {
    return await downloadTelegramFile(api, fileRoot, file.ref ?? "", limits.maxBytes, signal);
  } catch (err) {
    if (err instanceof TooLargeError) {
      throw new FileFetchError(`${file.name} is over the cap`, {
        cause: err,
        userText: edgeTexts.fileTooLarge(file.name, err.bytesRead, limits.maxBytes),
      });
    }
    if (signal.aborted) {
      throw new FileFetchError(`${file.name} took too long`, {
        userText: edgeTexts.fileTimeout(file.name),
      });
    }
    log.warn({ err: loggableError(err), file: file.name }, "telegram: could not fetch a file");
    throw new FileFetchError(`${file.name} could not be fetched`, {
      cause: safeCause(err),
      userText: `"${file.name}" could not be downloaded from Telegram; please send it again.`,
    });
  }
}
