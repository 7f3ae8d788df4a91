import { z } from "zod";

/**
 * A file a reply carries besides its text: an image (sent as a photo), or any other
 * content (audio, a blob, a long text output) sent as a document. `data` is base64.
 */
export const AttachmentSchema = z.object({
  kind: z.enum(["image", "file"]),
  name: z.string().min(1),
  mime: z.string().min(1),
  data: z.string(),
});
export type Attachment = z.infer<typeof AttachmentSchema>;

/** The attachment's bytes. */
export function attachmentBytes(a: Attachment): Buffer {
  return Buffer.from(a.data, "base64");
}
