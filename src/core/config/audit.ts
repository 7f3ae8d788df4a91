import { z } from "zod";

/** The `audit` section: how long the audit trail (approvals, pairings, destructive calls) is kept. */
export const AuditSchema = z
  .strictObject({
    /** Entries older than this many days are trimmed from the trail (Redis stream, by age). */
    keepDays: z.number().positive().default(90),
  })
  .prefault({});
export type AuditConfig = z.infer<typeof AuditSchema>;
