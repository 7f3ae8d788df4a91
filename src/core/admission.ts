import { z } from "zod";

/** The inbound flood limits one sender's event is held to, checked in the same step as its enqueue. */
export interface FloodTicket {
  /** The platform user id the per-person turn rate counts (e.g. `tg:5`, `@a:x`). */
  userId: string;
  turnsPerMinute: number;
  roomQueueCap: number;
}

/** Which flood limit refused an event: the person's turn rate or the room's queue cap. */
export const FloodLimitSchema = z.enum(["rate", "queue"]);

/**
 * What an enqueue held to flood limits did: queued, a duplicate of a queued event, or
 * refused (not queued) with whether the one notice for that refusal is due now.
 */
export const AdmissionSchema = z.discriminatedUnion("result", [
  z.strictObject({ result: z.literal("queued") }),
  z.strictObject({ result: z.literal("duplicate") }),
  z.strictObject({ result: z.literal("refused"), limit: FloodLimitSchema, noticeDue: z.boolean() }),
]);

/** See AdmissionSchema. */
export type Admission = z.infer<typeof AdmissionSchema>;
