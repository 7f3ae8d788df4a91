import { z } from "zod";

/** The `sessions` section: how long per-room state lives and how much history it keeps. */
export const SessionsSchema = z
  .strictObject({
    idleSeconds: z
      .number()
      .int()
      .positive()
      .default(7 * 24 * 3600),
    historyTurns: z.number().int().positive().default(20),
    choiceSeconds: z
      .number()
      .int()
      .positive()
      .default(24 * 3600),
    /** How long a tool waits for a missing argument (slot filling) before it expires. */
    slotSeconds: z
      .number()
      .int()
      .positive()
      .default(15 * 60),
    /** How long a destructive call waits for its approvals before it expires (and the trail says so). */
    approvalSeconds: z.number().int().positive().default(3600),
  })
  .prefault({});
