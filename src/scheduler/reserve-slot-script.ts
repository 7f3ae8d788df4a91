import { z } from "zod";
import { declareScript } from "./lua-script.js";

/** reserve-slot.lua (with the windows' functions, windows.lua): one send slot, a 429's hold, an answer time. */
export const RESERVE_SLOT = declareScript({
  file: new URL("./lua/reserve-slot.lua", import.meta.url),
  includes: [new URL("./lua/windows.lua", import.meta.url)],
  keys: ["first", "state"],
  moreKeys: true,
  args: z.object({
    windows: z.array(z.object({ windowKey: z.number(), max: z.number(), windowMs: z.number() })),
    member: z.string(),
    mode: z.enum(["take", "book", "booked", "answered", "hold", "past", "checked", "rechecked", "release"]),
    ms: z.number(),
    gate: z.boolean(),
    startedAt: z.number().optional(),
    groupMs: z.number().optional(),
    imports: z
      .array(
        z.object({
          keepMs: z.number(),
          sends: z.array(z.object({ member: z.string(), agoMs: z.number() })),
        }),
      )
      .optional(),
    shardsHeld: z.array(z.number()).optional(),
    shardsReached: z.array(z.number()).optional(),
    groupShard: z.number().optional(),
    blanketOk: z.boolean().optional(),
  }),
  reply: z.object({
    waitMs: z.number(),
    tight: z.boolean(),
    unchecked: z.boolean().optional(),
    at: z.number().optional(),
    idleMs: z.number().optional(),
    shard: z.number().optional(),
  }),
});

/** What a call asks of the windows (reserve-slot.lua's `mode`, less the gap check's `checked`). */
export type Mode = "take" | "book" | "booked" | "answered" | "hold" | "past";

/** A reply of the slot script with the call's round trip. */
export interface Direct {
  waitMs: number;
  tight: boolean;
  unchecked?: boolean | undefined;
  at?: number | undefined;
  idleMs?: number | undefined;
  shard?: number | undefined;
  rttMs: number;
}
