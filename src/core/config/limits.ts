import { z } from "zod";
import { fromMilliseconds, RENAMED_TO_SECONDS } from "./renamed-keys.js";

/** The `limits` section: what one person may send, and how fast. */
export const LimitsSchema = z
  .preprocess(
    fromMilliseconds(RENAMED_TO_SECONDS.limits),
    z.strictObject({
      /** Largest inbound message accepted, in characters. */
      maxMessageChars: z.number().int().positive().default(16_000),
      /** Largest file (text, photo, voice note, document) taken for a tool, in bytes. */
      maxFileBytes: z.number().int().positive().default(1_000_000),
      /** Media types a file may have to be passed to a tool (`type/*` patterns); others get a clear line. */
      fileTypes: z
        .array(
          z
            .string()
            .regex(
              /^[a-z0-9.+-]+\/(\*|[a-z0-9.+-]+)$/i,
              'a media type such as "image/*" or "application/pdf"',
            ),
        )
        .default(["image/*", "audio/*", "text/*", "application/pdf"]),
      /** Longest a file download may take, in seconds. */
      fileTimeoutSeconds: z.number().positive().default(20),
      /** Most turns one person may start per minute; the excess gets one notice and is not queued. */
      turnsPerMinute: z.number().int().positive().default(20),
      /** Most events waiting in one room's queue; the excess gets one notice and is not queued. */
      roomQueueCap: z.number().int().positive().default(50),
      /** Largest namespace reply read (any MCP message, stdio or HTTP), in bytes; a larger one fails its call unread. */
      maxToolResultBytes: z.number().int().positive().default(20_000_000),
      /** Most tools one namespace's `tools/list` may bring, all pages together; more fails the listing. */
      maxTools: z.number().int().positive().default(2_000),
      /** Most bytes of tool descriptions one listing may bring, all pages together. */
      maxToolListBytes: z.number().int().positive().default(10_000_000),
      /** Most pages (`nextCursor` followed) one listing may take. */
      maxToolListPages: z.number().int().positive().default(100),
    }),
  )
  .prefault({});
