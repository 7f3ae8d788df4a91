import { z } from "zod";

/** The `limits` section: what one person may send, and how fast. */
export const LimitsSchema = z
  .strictObject({
    /** Largest inbound message accepted, in characters. */
    maxMessageChars: z.number().int().positive().default(16_000),
    /** Largest text file accepted as an argument, in bytes. */
    maxFileBytes: z.number().int().positive().default(1_000_000),
    /** Longest a file download may take, in milliseconds. */
    fileTimeoutMs: z.number().int().positive().default(20_000),
    /** Most turns one person may start per minute; the excess gets one notice and is not queued. */
    turnsPerMinute: z.number().int().positive().default(20),
    /** Most events waiting in one room's queue; the excess gets one notice and is not queued. */
    roomQueueCap: z.number().int().positive().default(50),
    /** Largest namespace reply read (any MCP message, stdio or HTTP), in bytes; a larger one fails its call unread. */
    maxToolResultBytes: z.number().int().positive().default(20_000_000),
  })
  .prefault({});
