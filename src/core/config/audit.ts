import { z } from "zod";

/** The `audit` section: how long the audit trail (approvals, pairings, destructive calls) is kept. */
export const AuditSchema = z
  .strictObject({
    /** Entries older than this many days are trimmed from the trail (Redis stream, by age). */
    keepDays: z.number().positive().default(90),
    /** Largest arguments an entry keeps whole, in bytes of JSON; larger ones keep their hash, size and first bytes. */
    maxArgumentBytes: z.number().int().positive().default(1024),
  })
  .prefault({});
export type AuditConfig = z.infer<typeof AuditSchema>;
