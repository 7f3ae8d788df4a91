import type { Api } from "grammy";
import type { Document } from "grammy/types";
import type { InboundFile } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { TooLargeError } from "../edge/capped-read.js";
import { edgeTexts } from "../edge/edge-texts.js";
import { loggableError } from "./loggable-error.js";
import { downloadTelegramFile } from "./telegram-files.js";

const TEXT_MIMES = new Set(["text/plain", "text/markdown", "text/x-markdown", "text/csv"]);
const TEXT_EXTENSIONS = /\.(md|markdown|txt|csv)$/i;
const ACCEPTED = "Send Markdown, plain text or CSV as UTF-8.";

/**
 * Turns a Telegram document into an inbound file: text files within the size cap are
 * downloaded through getFile and decoded as UTF-8; other files within the cap keep their
 * file_id for the worker to fetch when a tool takes them; a file over the cap, or that
 * cannot be read, carries the reason, so the person gets a clear message. The size is
 * checked from the message, then from getFile's `file_size`, then while reading (never
 * more than the cap is read), and the whole read is bounded by a timeout.
 */
export class DocumentReader {
  constructor(
    private readonly api: Api,
    /** `<apiRoot>/file/bot<token>`: where the Bot API serves files. */
    private readonly fileRoot: string,
    private readonly maxBytes: number,
    private readonly log: Logger,
    private readonly timeoutMs = 20_000,
  ) {}

  /** Reads one document, never throwing: a failure becomes `rejected`. */
  async read(doc: Document): Promise<InboundFile> {
    const name = doc.file_name ?? "file";
    const mime = doc.mime_type ?? "application/octet-stream";
    const size = doc.file_size ?? 0;
    const base = { name, mime, size };
    if (size > this.maxBytes) return { ...base, kind: "document", rejected: this.tooLarge(name, size) };
    // Any other file stays on Telegram: the worker fetches it only when a tool of the room takes it.
    if (!TEXT_MIMES.has(mime.toLowerCase()) && !TEXT_EXTENSIONS.test(name)) {
      return { ...base, kind: "document", ref: doc.file_id };
    }
    let bytes: Uint8Array;
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      bytes = await this.download(doc.file_id, signal);
    } catch (err) {
      if (err instanceof TooLargeError) {
        return { ...base, size: err.bytesRead, rejected: this.tooLarge(name, err.bytesRead) };
      }
      if (signal.aborted) return { ...base, rejected: edgeTexts.fileTimeout(name) };
      this.log.warn({ err: loggableError(err), file: name }, "telegram: could not download a document");
      return { ...base, rejected: `"${name}" could not be downloaded from Telegram; please send it again.` };
    }
    try {
      const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
      return { ...base, size: bytes.byteLength, text };
    } catch {
      return { ...base, rejected: `"${name}" is not UTF-8 text. ${ACCEPTED}` };
    }
  }

  private tooLarge(name: string, size: number): string {
    return edgeTexts.fileTooLarge(name, size, this.maxBytes);
  }

  private download(fileId: string, signal: AbortSignal): Promise<Uint8Array> {
    return downloadTelegramFile(this.api, this.fileRoot, fileId, this.maxBytes, signal);
  }
}
