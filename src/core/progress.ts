import { z } from "zod";

/**
 * One update of a running call's status message: `key` names the call (one status
 * message per key, edited in place), `done` finishes it when the answer arrives.
 */
export const ProgressUpdateSchema = z.object({
  key: z.string().min(1),
  text: z.string(),
  done: z.boolean(),
});
export type ProgressUpdate = z.infer<typeof ProgressUpdateSchema>;
