import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { attachmentBytes, type Attachment } from "../core/attachment.js";

/** A file name safe for any file system, keeping the attachment's own name readable. */
function safeName(name: string): string {
  return name.replace(/[^\w.-]+/g, "_").slice(0, 120) || "file";
}

/**
 * Saves a reply's attachments in the terminal room's folder under the state folder
 * and returns one line per file for the terminal: what it is and where it is.
 */
export function saveAttachments(dir: string, turnId: string, attachments: Attachment[]): string[] {
  if (attachments.length === 0) return [];
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return attachments.map((a, i) => {
    const path = join(dir, `${safeName(turnId)}-${i + 1}-${safeName(a.name)}`);
    const bytes = attachmentBytes(a);
    writeFileSync(path, bytes, { mode: 0o600 });
    const what = a.kind === "image" ? "image" : "file";
    return `📎 ${what} ${a.name} (${a.mime}, ${bytes.length} bytes) saved to ${path}`;
  });
}
