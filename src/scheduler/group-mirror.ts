import { z } from "zod";
import type { SendWindow } from "../core/adapter.js";
import { telegramRoom } from "../core/room.js";
import { within } from "./cluster-nodes.js";
import type { Durability } from "./durable-write.js";
import { declareScript, runScript } from "./lua-script.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { SchedulerKeys } from "./scheduler-keys.js";

const lua = (file: string) => new URL(`./lua/${file}.lua`, import.meta.url);

/** group-mirror.lua: a group's send through the bot's windows, written in its room's shard. */
export const GROUP_MIRROR = declareScript({
  file: lua("group-mirror"),
  keys: ["since", "window"],
  args: z.object({
    member: z.string(),
    mode: z.enum(["sent", "answered", "hold", "past", "start", "since"]),
    ms: z.number(),
    windowMs: z.number(),
    sinceMs: z.number(),
  }),
  reply: z.object({ since: z.number() }),
});

/** How long a first send waits for `mirrored` to be set in every shard. */
const START_WITHIN_MS = 1000;

/** How often copies that could not be written are tried again. */
const OWED_EVERY_MS = 250;

/** Copies owed at most (a minute of a whole shard's group sends out of reach): the oldest goes first. */
const OWED_KEPT = 10_000;

/** A copy not written yet: the send's windows, its member, and until when it counts (local ms). */
interface Owed {
  windows: SendWindow[];
  group: SendWindow;
  member: string;
  hold: boolean;
  until: number;
}

/** What a send through the bot's windows tells the mirror (group-mirror.lua's `mode`). */
export type MirrorMode = "sent" | "answered" | "hold" | "past";

/**
 * How long the bot's windows' `state` outlives their last call (reserve-slot.lua): a
 * bot without it has sent nothing for that long, so nothing of it counts anywhere.
 */
const STATE_KEPT_MS = 86_400_000;

/**
 * The shard whose fallback windows serve a send (window-fallback.ts): its chat's room's
 * (a forum topic's too), one place for its windows, in reach whenever its room is.
 */
export function fallbackShard(keys: SchedulerKeys, windows: SendWindow[], member: string): number {
  const chat = windows.find((w) => w.scope.startsWith("chat:"));
  const bot = windows[0]!.group;
  return keys.shardOf(
    chat ? telegramRoom(bot.slice("tg:".length), chat.scope.slice("chat:".length)) : member,
  );
}

/**
 * A copy of each group chat's sends through the bot's own windows, kept in the group's
 * window among its room's shard's fallback windows: the bot's windows live in one
 * Cluster slot, and when its range goes down the fallback (window-fallback.ts) then
 * knows the group's minute from this copy instead of waiting it out. A send is written
 * here after its slot and before it leaves (an outage notice's meanwhile: it may not
 * wait), its answer and a 429's hold after; `mirrored` in each shard says from when
 * every send is. A copy that fails is written later (`record`): its shard is out of
 * reach, and so are its group's fallback windows. Only on a Cluster, where the
 * fallback is.
 */
export class GroupMirror {
  /** Per bot's windows' group: `mirrored` set in every shard, once per process, and until when sends wait for it. */
  private readonly started = new Map<string, { done: Promise<void>; until: number }>();
  /** The bots' windows' groups whose `mirrored` this process has tried to set. */
  private readonly tried = new Set<string>();
  /** Copies not written yet, by group scope and member (oldest first). */
  private readonly owed = new Map<string, Owed>();
  private paying: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SchedulerKeys,
    private readonly durability: Durability,
  ) {}

  /**
   * Sets `mirrored` in every shard where it is not set, before this process's first
   * send with the bot's windows, to the bot's own mark, decided by the first process:
   * a day ago when those windows had no state (no send of that bot counts anywhere,
   * and every later one is written here), else the moment it decided. A failure is
   * tried again at the next send; until a shard has its mark, its groups' fallback
   * sends wait as in round 6.
   */
  async start(bot: SendWindow): Promise<void> {
    let started = this.started.get(bot.group);
    if (!started) {
      // Only the process's first try is waited for: a try after a failure comes while
      // the bot's windows or a shard are out of reach, where it would hold every send.
      const until = this.tried.has(bot.group) ? 0 : Date.now() + START_WITHIN_MS;
      this.tried.add(bot.group);
      started = { done: this.setSince(bot), until };
      this.started.set(bot.group, started);
      started.done.catch(() => this.started.delete(bot.group));
    }
    // Not held up by a shard out of reach: a shard without its mark is only trusted less.
    // Every send waits for the same second at most (not a second each): while the bot's
    // windows are out of reach, the fallback's sends ask again every few hundred ms.
    const leftMs = started.until - Date.now();
    if (leftMs > 0) await within(started.done, leftMs);
  }

  private async setSince(bot: SendWindow): Promise<void> {
    // Decided once, in the bot's windows' slot, and copied to every shard: processes that
    // start together must not each decide from whether another one has sent already.
    const { since } = await runScript(
      this.redis,
      GROUP_MIRROR,
      { since: this.keys.rate(bot.group, "mirrored"), window: this.keys.rate(bot.group, "state") },
      { member: "", mode: "start", ms: 0, windowMs: 0, sinceMs: STATE_KEPT_MS },
      { durability: this.durability },
    );
    await Promise.all(
      Array.from({ length: this.keys.shards }, (_, shard) => {
        const key = this.keys.fallback(shard, bot.group, "mirrored");
        // "since" touches `since` only: it stands for `window` too.
        return runScript(
          this.redis,
          GROUP_MIRROR,
          { since: key, window: key },
          { member: "", mode: "since", ms: since, windowMs: 0, sinceMs: 0 },
          { durability: this.durability },
        );
      }),
    );
  }

  /**
   * Writes what a send to a group did in the bot's windows (nothing for other sends).
   * Never throws: a copy that fails (its shard out of reach) is owed, and written again
   * every OWED_EVERY_MS, as a send at that moment (later than it was: it counts longer),
   * while it would still count.
   */
  async record(windows: SendWindow[], member: string, mode: MirrorMode, ms: number): Promise<void> {
    const group = windows.find((w) => w.scope.startsWith("group:"));
    if (!group) return;
    try {
      await this.write(windows, group, member, mode, ms);
    } catch {
      const until = Date.now() + (mode === "hold" ? ms : 0) + group.windowMs;
      if (this.owed.size >= OWED_KEPT) this.owed.delete(this.owed.keys().next().value!);
      this.owed.set(`${group.scope}:${member}`, { windows, group, member, hold: mode === "hold", until });
      this.payOwed();
    }
  }

  private write(windows: SendWindow[], group: SendWindow, member: string, mode: MirrorMode, ms: number) {
    const shard = fallbackShard(this.keys, windows, member);
    return runScript(
      this.redis,
      GROUP_MIRROR,
      {
        since: this.keys.fallback(shard, group.group, "mirrored"),
        window: this.keys.fallback(shard, group.group, group.scope),
      },
      { member, mode, ms, windowMs: group.windowMs, sinceMs: 0 },
      { durability: this.durability },
    );
  }

  /** Writes the owed copies every OWED_EVERY_MS until none is left. */
  private payOwed(): void {
    this.paying ??= (async () => {
      while (this.owed.size > 0) {
        await new Promise((resolve) => setTimeout(resolve, OWED_EVERY_MS).unref());
        for (const [key, copy] of this.owed) {
          const now = Date.now();
          if (now >= copy.until) {
            this.owed.delete(key);
            continue;
          }
          const mode = copy.hold ? "hold" : "sent";
          const ms = copy.hold ? copy.until - copy.group.windowMs - now : 0;
          try {
            await this.write(copy.windows, copy.group, copy.member, mode, Math.max(0, ms));
            this.owed.delete(key);
          } catch {
            break;
          }
        }
      }
    })().finally(() => (this.paying = undefined));
  }
}
