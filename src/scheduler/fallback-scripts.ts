import { z } from "zod";
import { declareScript } from "./lua-script.js";

const lua = (file: string) => new URL(`./lua/${file}.lua`, import.meta.url);

/** fallback-slot.lua: a slot in a shard's fallback windows while the bot's own are out of reach. */
export const FALLBACK_SLOT = declareScript({
  file: lua("fallback-slot"),
  includes: [lua("windows")],
  keys: ["back", "last", "groups", "sent", "mirrored"],
  moreKeys: true,
  args: z.object({
    windows: z.array(z.object({ windowKey: z.number(), max: z.number(), windowMs: z.number() })),
    member: z.string(),
    mode: z.enum(["take", "answered", "hold"]),
    ms: z.number(),
    failingForMs: z.number(),
    group: z.string(),
    groupMs: z.number(),
    enterMs: z.number(),
    probingForMs: z.number(),
  }),
  reply: z.object({ waitMs: z.number(), tight: z.boolean(), refused: z.boolean() }),
});

/** fallback-check.lua: a shard told that the bot's own windows answer again, and its last fallback slot. */
export const FALLBACK_CHECK = declareScript({
  file: lua("fallback-check"),
  keys: ["back", "last", "groups", "sent"],
  args: z.object({ backMs: z.number() }),
  reply: z.object({
    kept: z.boolean(),
    agoMs: z.number(),
    groups: z.array(z.object({ scope: z.string(), ms: z.number() })),
    sends: z.array(z.object({ scope: z.string(), member: z.string(), agoMs: z.number() })),
  }),
});

/** What the bot's windows wait for after the fallback: see WindowFallback.check. */
export interface FallbackHolds {
  botMs: number;
  /** The sends to the groups of each of `shardsHeld` (shards out of reach). */
  groupMs: number;
  /** Shards that did not answer, whose groups are held until checked alone or for `groupMs`. */
  shardsHeld: number[];
  /** Shards that answered: a hold on their groups from an earlier check is lifted. */
  shardsReached: number[];
  /** Per group scope: its fallback sends (member, ms since), and how long the last still counts. */
  groups: Map<string, GroupSends>;
}

/** A group's fallback sends, for its window in the bot's slot: see WindowFallback.check. */
export interface GroupSends {
  /** How long the latest still counts, ms (the window is kept that long). */
  keepMs: number;
  sends: { member: string; agoMs: number }[];
}
