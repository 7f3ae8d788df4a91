import type { InboundFile } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { TooLargeError } from "../edge/capped-read.js";
import { edgeTexts } from "../edge/edge-texts.js";
import { decryptAttachment } from "./crypto/encrypted-media.js";
import type { EncryptedFile } from "./matrix-events.js";
import { downloadMedia } from "./media-download.js";

/** A text file a message points at, as the classifier read it. */
export interface MediaFile {
  name: string;
  mime: string;
  /** The sender's claimed size: only ever used to refuse early, never to allow. */
  claimedSize: number;
  url: string;
  /** For a file sent in an encrypted room: how to decrypt what is downloaded. */
  encryption?: EncryptedFile;
}

/**
 * Downloads a text file from the homeserver's media API with a hard byte cap counted
 * while streaming (never trusting the sender's `info.size`) and one timeout for the whole
 * read, trying the authenticated endpoint (Matrix 1.11) and then the legacy one. A file
 * of an encrypted room is decrypted (and its hash checked) after the download.
 */
export class MediaReader {
  private readonly utf8 = new TextDecoder("utf-8", { fatal: true });

  constructor(
    private readonly homeserver: string,
    private readonly accessToken: string,
    private readonly maxBytes: number,
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {}

  /** Reads the file, never throwing: a failure becomes `rejected`. */
  async read(file: MediaFile): Promise<InboundFile> {
    const base = { name: file.name, mime: file.mime, size: file.claimedSize };
    if (file.claimedSize > this.maxBytes) {
      return { ...base, rejected: edgeTexts.fileTooLarge(file.name, file.claimedSize, this.maxBytes) };
    }
    const signal = AbortSignal.timeout(this.timeoutMs);
    let data: Uint8Array;
    try {
      data = await this.download(file.url, signal);
    } catch (err) {
      if (err instanceof TooLargeError) {
        return {
          ...base,
          size: err.bytesRead,
          rejected: edgeTexts.fileTooLarge(file.name, err.bytesRead, this.maxBytes),
        };
      }
      if (signal.aborted) return { ...base, rejected: edgeTexts.fileTimeout(file.name) };
      this.log.warn({ err, url: file.url }, "matrix file download failed");
      return { ...base, rejected: `${file.name} could not be downloaded from the homeserver.` };
    }
    if (file.encryption) {
      try {
        data = await decryptAttachment(data, file.encryption);
      } catch (err) {
        this.log.warn({ err, url: file.url }, "matrix: an encrypted file did not decrypt");
        return { ...base, rejected: `${file.name} could not be decrypted (its key or hash does not match).` };
      }
    }
    try {
      return { ...base, size: data.byteLength, text: this.utf8.decode(data) };
    } catch {
      return { ...base, size: data.byteLength, rejected: `${file.name} is not UTF-8 text.` };
    }
  }

  private download(mxc: string, signal: AbortSignal): Promise<Uint8Array> {
    return downloadMedia(this.homeserver, this.accessToken, mxc, this.maxBytes, signal);
  }
}
