import type { z } from "zod";
import type { Durability } from "./durable-write.js";
import { declareScript, MoreKeys, runScript, type LuaScript } from "./lua-script.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import {
  CheckFloodArgsSchema,
  ClaimArgsSchema,
  EnqueueEventsArgsSchema,
  FinishArgsSchema,
  ParkArgsSchema,
  PeekArgsSchema,
  ReleaseArgsSchema,
  RenewArgsSchema,
  RequeueArgsSchema,
  StepArgsSchema,
} from "./scheduler-args.js";
import {
  ClaimReplySchema,
  EnqueueEventsReplySchema,
  FinishReplySchema,
  FloodReplySchema,
  ParkReplySchema,
  PeekReplySchema,
  ReleaseReplySchema,
  RenewReplySchema,
  RequeueReplySchema,
  StepReplySchema,
} from "./scheduler-replies.js";

const lua = (file: string) => new URL(`./lua/${file}.lua`, import.meta.url);
const FENCE = lua("fence");
const FLOOD = lua("flood");
const CLAIM = lua("claim");

/** The room keys a turn's end touches, by the names finish-turn.lua and park-turn.lua give them. */
export const TURN_KEYS = [
  "lease",
  "running",
  "pending",
  "session",
  "history",
  "offers",
  "turn",
  "inbox",
] as const;

/** The scheduler's Lua scripts (src/scheduler/lua), each declared once: keys and arguments by name. */
export const SCHEDULER_SCRIPTS = {
  enqueueEvents: declareScript({
    file: lua("enqueue-events"),
    includes: [FENCE, FLOOD, CLAIM],
    keys: ["pending", "running", "seen"],
    moreKeys: true,
    args: EnqueueEventsArgsSchema,
    reply: EnqueueEventsReplySchema,
  }),
  checkFlood: declareScript({
    file: lua("check-flood"),
    includes: [FLOOD],
    keys: ["inbox", "counter", "noticeQueue", "noticeRate"],
    args: CheckFloodArgsSchema,
    reply: FloodReplySchema,
  }),
  claimRoom: declareScript({
    file: lua("claim-room"),
    includes: [FENCE, CLAIM],
    keys: ["pending", "running", "lease", "inbox", "session", "turn"],
    args: ClaimArgsSchema,
    reply: ClaimReplySchema,
  }),
  peekShard: declareScript({
    file: lua("peek-shard"),
    includes: [FENCE],
    keys: ["pending", "running"],
    args: PeekArgsSchema,
    reply: PeekReplySchema,
  }),
  turnStep: declareScript({
    file: lua("turn-step"),
    includes: [FENCE],
    keys: ["lease", "running", "session", "history", "offers", "turn"],
    args: StepArgsSchema,
    reply: StepReplySchema,
  }),
  finishTurn: declareScript({
    file: lua("finish-turn"),
    includes: [FENCE],
    keys: TURN_KEYS,
    args: FinishArgsSchema,
    reply: FinishReplySchema,
  }),
  parkTurn: declareScript({
    file: lua("park-turn"),
    includes: [FENCE],
    keys: [...TURN_KEYS, "letters", "letterIndex"],
    args: ParkArgsSchema,
    reply: ParkReplySchema,
  }),
  releaseRoom: declareScript({
    file: lua("release-room"),
    includes: [FENCE],
    keys: ["lease", "running", "pending", "inbox"],
    args: ReleaseArgsSchema,
    reply: ReleaseReplySchema,
  }),
  renewLeases: declareScript({
    file: lua("renew-leases"),
    includes: [FENCE],
    keys: ["running"],
    moreKeys: true,
    args: RenewArgsSchema,
    reply: RenewReplySchema,
  }),
  requeueDeadLetter: declareScript({
    file: lua("requeue-dead-letter"),
    includes: [FENCE],
    keys: ["letters", "letterIndex", "inbox", "pending", "running"],
    args: RequeueArgsSchema,
    reply: RequeueReplySchema,
  }),
} as const;

type Scripts = typeof SCHEDULER_SCRIPTS;
/** A scheduler script's name in SCHEDULER_SCRIPTS. */
export type ScriptName = keyof Scripts;
/** The argument table of a scheduler script. */
export type ArgsOf<N extends ScriptName> = Scripts[N] extends LuaScript<string, infer A, unknown> ? A : never;
/** The keys of a scheduler script, by name. */
export type KeysOf<N extends ScriptName> =
  Scripts[N] extends LuaScript<infer K, unknown, unknown> ? Record<K, string> : never;
/** The parsed reply of a scheduler script. */
export type ReplyOf<N extends ScriptName> = z.infer<Scripts[N]["reply"]>;

/**
 * Runs one scheduler script by name; with `durability`, as a durable write
 * (src/scheduler/durable-write.ts); `more`: the keys its arguments name beyond the declared ones.
 */
export function callScript<N extends ScriptName>(
  redis: RedisClient,
  name: N,
  keys: KeysOf<N>,
  args: ArgsOf<N>,
  durability: Durability | undefined,
  more?: MoreKeys,
): Promise<ReplyOf<N>> {
  const script = SCHEDULER_SCRIPTS[name] as unknown as LuaScript<string, unknown, ReplyOf<N>>;
  return runScript(redis, script, keys as Record<string, string>, args, {
    ...(durability ? { durability } : {}),
    ...(more ? { moreKeys: more } : {}),
  });
}

/** The numbering of the keys one call of a `moreKeys` script names in its arguments. */
export function moreKeysOf<N extends ScriptName>(name: N, keys: KeysOf<N>): MoreKeys {
  const script = SCHEDULER_SCRIPTS[name] as unknown as LuaScript<string, unknown, unknown>;
  return new MoreKeys(script, keys as Record<string, string>);
}
