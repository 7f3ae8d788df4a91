import { z } from "zod";

/** The `edits` section: what happens when a person edits a message they sent (Telegram edited_message, Matrix m.replace). */
export const EditsSchema = z
  .strictObject({
    /** Ask again with the edited text; off by default, when edits are only logged. */
    reask: z.boolean().default(false),
    /** Only edits made within this many seconds of the original message are asked again. */
    windowSeconds: z.number().int().positive().default(120),
  })
  .prefault({});
export type EditsConfig = z.infer<typeof EditsSchema>;
