import { attachmentBytes, type Attachment } from "../core/attachment.js";
import type { RoomSendPlan } from "./crypto/outbound-encryption.js";

/** The largest file the bot uploads; a homeserver's own limit is often lower and answers 413. */
export const UPLOAD_MAX_BYTES = 50 * 1024 * 1024;

/**
 * The event content of one attachment: the file uploaded to the media repository
 * (encrypted in an encrypted room), then an `m.image` (images), `m.audio` (audio) or
 * `m.file` (the rest) pointing at it. A file over the limit becomes a notice naming it.
 */
export async function attachmentContent(plan: RoomSendPlan, a: Attachment): Promise<Record<string, unknown>> {
  const bytes = attachmentBytes(a);
  if (bytes.length > UPLOAD_MAX_BYTES) {
    const mb = (bytes.length / 1024 / 1024).toFixed(1);
    return { msgtype: "m.notice", body: `📎 ${a.name} (${mb} MB) is too large to send here.` };
  }
  const where = await plan.upload(bytes, a.mime, a.name);
  const msgtype = a.kind === "image" ? "m.image" : a.mime.startsWith("audio/") ? "m.audio" : "m.file";
  return {
    msgtype,
    body: a.name,
    filename: a.name,
    ...where,
    info: { mimetype: a.mime, size: bytes.length },
  };
}
