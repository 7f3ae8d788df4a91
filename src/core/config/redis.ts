import { z } from "zod";

/** The `redis` section: where state lives; without `url` the embedded default runs. */
export const RedisSchema = z
  .strictObject({
    url: z.string().optional(),
    prefix: z.string().min(1).default("rg"),
    /** Run on an external Redis without persistence, accepting that a restart loses queued turns. */
    volatile: z.boolean().default(false),
  })
  .prefault({});
