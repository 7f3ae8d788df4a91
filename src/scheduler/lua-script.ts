import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { Packr, Unpackr } from "msgpackr";
import type { ZodType } from "zod";
import { durableWrite, NO_WAIT, type Durability, type Write } from "./durable-write.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { mastersOf } from "../sessions/redis-masters.js";
import { writeRefusals } from "./write-refusals.js";

/**
 * Arguments packed as Redis' `cmsgpack.unpack` reads them: a plain map per object
 * (no msgpackr records), `undefined` as nil (a field left out). Redis 7.0's cmsgpack
 * knows no binary type: bytes go as blobs (`ScriptSpec.blobs`).
 */
const packr = new Packr({ encodeUndefinedAsNil: true, useRecords: false });

/** Replies as `cmsgpack.pack` writes them: maps as objects, 64-bit integers as numbers. */
const unpackr = new Unpackr({ int64AsType: "number", useRecords: false, mapsAsObjects: true });

/** What a script is declared with: its file, its keys and argument table by name, its reply. */
export interface ScriptSpec<K extends string, A, R> {
  /**
   * The script (a file beside its declaration), opening with a header comment that
   * names its KEYS in order, its ARGS fields and its REPLY fields (checked by a test).
   */
  file: URL;
  /** Files of shared Lua functions put before it, in order. */
  includes?: URL[];
  /** Its KEYS by name, in order. The first routes it on a Cluster: every key it touches is in that key's slot. */
  keys: readonly K[];
  /** The one table of named arguments: ARGV[1], read in Lua as `A`. */
  args: ZodType<A>;
  /** What it returns: one table (`cmsgpack.pack`), parsed with this schema. */
  reply: ZodType<R>;
  /**
   * When a call touches more keys than the declared ones (one per event, per window, per
   * lease): they follow the declared KEYS, and the argument table names each by its
   * index in KEYS, in a field ending in `Key` that the script reads as `KEYS[x.fooKey]`
   * (`MoreKeys` numbers them), so that every key a call touches is in KEYS.
   */
  moreKeys?: boolean;
  /** When the script takes byte strings (which a table cannot carry here): their name, as `BLOBS` after the table. */
  blobs?: string;
}

/** A declared Lua script: its spec, the command ioredis defines for it and its text as sent. */
export interface LuaScript<K extends string, A, R> extends ScriptSpec<K, A, R> {
  /** The ioredis command name (`rg` + the file name in camel case). */
  readonly name: string;
  /** The file name without `.lua`. */
  readonly id: string;
  /** The text as sent: the generated names of KEYS and ARGS, the includes, the script. */
  readonly lua: string;
  /** SHA1 of `lua`, as EVALSHA and MONITOR name it. */
  readonly sha: string;
}

/** Keys and arguments of one call of a script, by name. */
export type ScriptKeys<S> = S extends LuaScript<infer K, unknown, unknown> ? Record<K, string> : never;

/**
 * The further keys of one call of a script declared with `moreKeys`: `of` gives a key's
 * index in KEYS, for the argument table to name it by: a declared key's own, else the
 * key is added once after the declared ones.
 */
export class MoreKeys<K extends string = string> {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();
  private readonly declared: number;

  constructor(script: LuaScript<K, unknown, unknown>, keys: Record<K, string>) {
    if (!script.moreKeys) throw new Error(`${script.id} is not declared with moreKeys`);
    this.declared = script.keys.length;
    script.keys.forEach((k, i) => {
      if (!this.index.has(keys[k])) this.index.set(keys[k], i + 1);
    });
  }

  /** The key's index in KEYS (1-based, as the script reads it). */
  of(key: string): number {
    let at = this.index.get(key);
    if (at === undefined) {
      this.list.push(key);
      at = this.declared + this.list.length;
      this.index.set(key, at);
    }
    return at;
  }
}

/** Every script declared in this process, by command name: what `preloadScripts` loads. */
const declared = new Map<string, LuaScript<string, unknown, unknown>>();

/**
 * Declares one of the project's Lua scripts (every script is declared this way, once),
 * so that its keys and arguments are passed by name: KEYS in the declared order and
 * the arguments as one msgpack table that the script reads as `A.<name>` (its keys as
 * `K.<name>`), never by position.
 */
export function declareScript<const K extends string, A, R>(spec: ScriptSpec<K, A, R>): LuaScript<K, A, R> {
  const id = basename(fileURLToPath(spec.file), ".lua");
  const name = `rg${id.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase())}`;
  const prelude = [
    `local K = { ${spec.keys.map((k, i) => `${k} = KEYS[${i + 1}]`).join(", ")} }`,
    "local A = cmsgpack.unpack(ARGV[1])",
    ...(spec.blobs ? ["local BLOBS = { select(2, unpack(ARGV)) }"] : []),
  ].join("\n");
  const lua = [prelude, ...(spec.includes ?? []).map(read), read(spec.file)].join("\n");
  const script: LuaScript<K, A, R> = {
    ...spec,
    id,
    name,
    lua,
    sha: createHash("sha1").update(lua).digest("hex"),
  };
  const earlier = declared.get(name);
  if (earlier && earlier.lua !== lua) throw new Error(`two scripts are declared as ${name}`);
  declared.set(name, script as LuaScript<string, unknown, unknown>);
  return script;
}

function read(url: URL): string {
  return readFileSync(url, "utf8");
}

/** Every script declared so far (each module declares its own when it is loaded). */
export function declaredScripts(): LuaScript<string, unknown, unknown>[] {
  return [...declared.values()];
}

/** Defines the script on the client with ioredis `defineCommand` (EVALSHA, EVAL once on NOSCRIPT), once. */
function define(redis: RedisClient, script: LuaScript<string, unknown, unknown>): void {
  // With more keys, each call passes its number of keys first (ioredis' form without numberOfKeys).
  if (!(script.name in redis))
    redis.defineCommand(script.name, {
      lua: script.lua,
      ...(script.moreKeys ? {} : { numberOfKeys: script.keys.length }),
    });
}

/**
 * The one loader: defines every declared script on the client and loads each on
 * every master at start, so that the first call of each goes as EVALSHA; a master
 * that lost them (a restart, a failover) gets a script's text again on its first
 * NOSCRIPT.
 */
export async function preloadScripts(redis: RedisClient): Promise<void> {
  const scripts = declaredScripts();
  for (const script of scripts) define(redis, script);
  await Promise.all(mastersOf(redis).flatMap((node) => scripts.map((s) => node.script("LOAD", s.lua))));
}

type Commands = Record<string, (...args: (string | number | Buffer)[]) => Promise<unknown>>;

/** One call's command arguments: the keys in declared order and any more, the packed table, the blobs. */
function commandArgs<K extends string, A>(
  script: LuaScript<K, A, unknown>,
  keys: Record<K, string>,
  args: A,
  blobs: (string | Buffer)[],
  more: MoreKeys | undefined,
): (string | Buffer)[] {
  const named = script.keys.map((k) => keys[k]);
  const extra = more?.list ?? [];
  const out: (string | Buffer)[] = script.moreKeys
    ? [String(named.length + extra.length), ...named, ...extra]
    : named;
  out.push(packr.pack(args));
  out.push(...blobs);
  return out;
}

/** The reply as the script packed it, parsed with its declared schema. */
function replyOf<R>(script: LuaScript<string, unknown, R>, raw: unknown): R {
  return script.reply.parse(unpackr.unpack(raw as Buffer));
}

/**
 * Runs a declared script with its keys and arguments by name; with `durability`, as a
 * durable write (src/scheduler/durable-write.ts): the reply once the replicas it names
 * have the write, on the node of the script's first key.
 */
export async function runScript<K extends string, A, R>(
  redis: RedisClient,
  script: LuaScript<K, A, R>,
  keys: Record<K, string>,
  args: A,
  options: { durability?: Durability; blobs?: (string | Buffer)[]; moreKeys?: MoreKeys } = {},
): Promise<R> {
  define(redis, script as LuaScript<string, unknown, unknown>);
  const argv = commandArgs(script, keys, args, options.blobs ?? [], options.moreKeys);
  const command = `${script.name}Buffer`;
  try {
    if (!options.durability)
      return replyOf(script, await (redis as unknown as Commands)[command]!.apply(redis, argv));
    const first = keys[script.keys[0]!];
    const [reply] = await durableWrite(redis, options.durability ?? NO_WAIT, first, [asWrite(command, argv)]);
    return replyOf(script, reply);
  } catch (err) {
    throw failed(err, script.name);
  }
}

/**
 * A script call's error as it goes on: Redis' own error (its class and message, which
 * retries go by) naming the script instead of carrying ioredis' `command`, whose
 * arguments hold the packed table and, for an EVAL, the script's whole source (a log
 * line of many kilobytes). A refused write is noted for claims (write-refusals.ts).
 */
function failed(err: unknown, name: string): unknown {
  writeRefusals.note(err);
  if (err !== null && typeof err === "object" && "command" in err) {
    (err as { command: unknown }).command = { name };
  }
  return err;
}

/** One script call as a durable write's command (its packed table is a Buffer, which ioredis sends as it is). */
function asWrite(command: string, argv: (string | Buffer)[]): Write {
  return [command, ...argv] as unknown as Write;
}
