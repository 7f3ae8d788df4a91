import calculateSlot from "cluster-key-slot";
import { Cluster } from "ioredis";
import type { SendWindow } from "../core/adapter.js";
import { RoomgateError } from "../core/errors.js";
import type { Durability } from "./durable-write.js";
import { MoreKeys, runScript } from "./lua-script.js";
import { FALLBACK_CHECK, FALLBACK_SLOT, type FallbackHolds, type GroupSends } from "./fallback-scripts.js";
import { fallbackShard } from "./group-mirror.js";
import { ownerFailed, within } from "./cluster-nodes.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { SchedulerKeys } from "./scheduler-keys.js";

/**
 * A process uses the fallback only once its calls to the bot's windows have failed (or
 * gone unanswered) for this long: reserve-slot.lua's gap (2 s) is shorter, so the first
 * call there after any fallback send makes someone check the shards.
 */
const ENTER_MS = 3000;

/** A call to the bot's windows unanswered this long counts as failing (a dead master can hang it). */
export const SLOW_MS = 1000;

/**
 * How long the bot's window waits after a shard's last fallback slot: its bot and chat
 * windows (1 s and 1.15 s) plus the `soon` a sender may wait and an answer's delay.
 */
const HOLD_AFTER_MS = 2000;

/**
 * A group's sends through the bot's windows are copied into its fallback window
 * (group-mirror.ts) from the shard's `mirrored` mark on. Until the mark is the group's
 * window and this much older, a send to the group takes a fallback slot only once this
 * process has probed the bot's windows without an answer (every PROBE_EVERY_MS) for as
 * long: every send those windows let through before they went out of reach has then
 * left the group's window, as Telegram counts it (it left within SEEN_AHEAD_MS of its
 * slot and arrived within a second or two).
 */
const GROUP_MARGIN_MS = 3000;

/**
 * How long a shard keeps a check's mark (fallback-slot.lua refuses a sender failing
 * since before it): longer than a process whose own calls still fail can go on
 * thinking the bot's windows are down once the topology says they are back (its view
 * is re-read every TOPOLOGY_MS), and longer than a group can wait to enter (a minute
 * and GROUP_MARGIN_MS, in a shard without `mirrored`): a sender failing since before
 * the windows last answered never sends to a group through the fallback.
 */
const BACK_MS = 90_000;

/**
 * Telegram's 20-a-minute group window with its slack (send-limits.ts), and HOLD_AFTER_MS:
 * how long the groups whose room is in a shard out of reach at a check (after a gap of
 * at least ENTER_MS, long enough for fallback sends) wait, unless that shard is
 * checked alone before: it may have let some of their sends through.
 */
const GROUP_HOLD_MS = 61_150 + HOLD_AFTER_MS;

/**
 * How long a process in the fallback stays in it after the cluster last marked the
 * bot's slot failed, while its own calls there still fail: a master that was down
 * long loses the mark as soon as it is reachable, seconds before it serves its slots
 * (its data loading). Well within BACK_MS, so that a check made once it serves
 * refuses every later fallback slot of this failure.
 */
const STAY_MS = 5000;

/** How long a read of the cluster's view of the bot's slot is used. */
const TOPOLOGY_MS = 500;

/** Between two probes of the bot's windows while in the fallback. */
const PROBE_EVERY_MS = 250;

/** A fallback slot refused because the bot's own windows answered lately: the send asks them again later. */
export class FallbackRefusedError extends RoomgateError {
  constructor() {
    super("the bot's send windows answer again; fallback slot refused");
  }
}

/**
 * The bot's send windows while their Cluster slot range is down (src/scheduler/rate-limiter.ts
 * keeps them in one slot). A process that has seen calls there fail for ENTER_MS, while
 * the cluster marks the slot's master as failed, books its sends in a fallback in the
 * room's shard instead: the bot's limit split over the shards (so all shards together
 * never exceed it) and the chat's own window; a group's 20 a minute too, in its
 * window there, which holds the group's sends through the bot's windows as well
 * (group-mirror.ts).
 * Leaving it is made safe by the bot's slot itself:
 * the first call there after a gap makes a caller mark every shard (after which none
 * takes a fallback slot) and read when each took its last, and the bot's window waits
 * until those sends no longer count. Only on a Cluster: elsewhere one server holds both.
 */
export class WindowFallback {
  private failingSince: number | undefined;
  /** When, in the current failure, the cluster last marked the bot's slot failed. */
  private markedAt: number | undefined;
  private topology: { at: number; down: Promise<boolean> } | undefined;
  private probing = false;
  /** Since when the probe has gone on without an answer (every call failing all along). */
  private probingSince: number | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SchedulerKeys,
    private readonly durability: Durability,
    private readonly probe: (windows: SendWindow[]) => Promise<unknown>,
  ) {}

  /** Whether these windows are the bot's (gated by the gap rule): a Cluster, a bot-wide first window. */
  applies(windows: SendWindow[]): boolean {
    return this.redis instanceof Cluster && windows[0]?.scope === "bot" && windows[0].group.startsWith("tg:");
  }

  /** A call to the bot's windows was answered: they are in reach. */
  ok(): void {
    this.failingSince = undefined;
    this.markedAt = undefined;
    this.probingSince = undefined;
  }

  /** A call to the bot's windows, sent at `sentAt`, failed or is still unanswered after SLOW_MS. */
  failing(sentAt: number): void {
    if (this.failingSince === undefined || sentAt < this.failingSince) this.failingSince = sentAt;
  }

  /** Whether a send with these windows may take a fallback slot now. */
  async ready(windows: SendWindow[]): Promise<boolean> {
    if (this.failingSince === undefined || Date.now() - this.failingSince < ENTER_MS) return false;
    if (Math.floor(windows[0]!.max / this.keys.shards) < 1) return false;
    if (await this.botSlotDown(windows[0]!)) this.markedAt = Date.now();
    else if (this.markedAt === undefined || Date.now() - this.markedAt > STAY_MS) return false;
    this.startProbe(windows[0]!);
    this.probingSince ??= Date.now();
    return true;
  }

  /** Takes a slot in the fallback windows now or within `soonMs`, or returns the wait (nothing taken). */
  async take(
    windows: SendWindow[],
    member: string,
    soonMs: number,
  ): Promise<{ waitMs: number; tight: boolean }> {
    const reply = await this.run(windows, member, "take", soonMs);
    if (reply.refused) {
      this.ok();
      throw new FallbackRefusedError();
    }
    return reply;
  }

  /** Records the answer time or a 429's hold in the fallback windows. */
  async record(windows: SendWindow[], member: string, mode: "answered" | "hold", ms: number): Promise<void> {
    await this.run(windows, member, mode, ms);
  }

  /**
   * Marks every shard (no fallback slot is taken there from now on) and returns how
   * long the bot's window must wait for the fallback slots they took before (`botMs`)
   * and the group sends they let through (`groups`), for each group's window. A shard out
   * of reach may have taken one until now: the bot's window waits in full, and after a
   * gap of `idleMs` long enough for fallback sends (-1: not known) so do the groups
   * whose room is in it (`shardsHeld`), until that shard is checked alone (`checkShard`).
   */
  async check(group: string, idleMs: number): Promise<FallbackHolds> {
    const shards = Array.from({ length: this.keys.shards }, (_, shard) => shard);
    const replies = await Promise.all(shards.map((shard) => this.checkShard(group, shard)));
    const holds: FallbackHolds = {
      botMs: 0,
      groupMs: 0,
      shardsHeld: [],
      shardsReached: [],
      groups: new Map(),
    };
    replies.forEach((reply, shard) => {
      if (reply === undefined) {
        holds.botMs = Math.max(holds.botMs, HOLD_AFTER_MS);
        if (idleMs < 0 || idleMs >= ENTER_MS) {
          holds.groupMs = GROUP_HOLD_MS;
          holds.shardsHeld.push(shard);
        }
        return;
      }
      holds.shardsReached.push(shard);
      if (reply.botMs > holds.botMs) holds.botMs = reply.botMs;
      for (const [scope, sent] of reply.groups) {
        const known = holds.groups.get(scope);
        holds.groups.set(
          scope,
          known
            ? { keepMs: Math.max(known.keepMs, sent.keepMs), sends: [...known.sends, ...sent.sends] }
            : sent,
        );
      }
    });
    return holds;
  }

  /** `check` for one shard: its holds, or undefined when it does not answer. */
  async checkShard(
    group: string,
    shard: number,
  ): Promise<{ botMs: number; groups: Map<string, GroupSends> } | undefined> {
    const reply = await within(
      runScript(
        this.redis,
        FALLBACK_CHECK,
        this.shardKeys(shard, group),
        { backMs: BACK_MS },
        {
          durability: this.durability,
        },
      ),
      SLOW_MS,
    );
    if (reply === undefined) return undefined;
    const groups = new Map<string, GroupSends>();
    for (const { scope, ms } of reply.groups) groups.set(scope, { keepMs: ms + HOLD_AFTER_MS, sends: [] });
    for (const { scope, member, agoMs } of reply.sends) groups.get(scope)?.sends.push({ member, agoMs });
    return { botMs: reply.kept ? Math.max(0, HOLD_AFTER_MS - reply.agoMs) : 0, groups };
  }

  private shardKeys(
    shard: number,
    group: string,
  ): { back: string; last: string; groups: string; sent: string } {
    return {
      back: this.keys.fallback(shard, group, "back"),
      last: this.keys.fallback(shard, group, "last"),
      groups: this.keys.fallback(shard, group, "groups"),
      sent: this.keys.fallback(shard, group, "sent"),
    };
  }

  private async run(
    windows: SendWindow[],
    member: string,
    mode: "take" | "answered" | "hold",
    ms: number,
  ): Promise<{ waitMs: number; tight: boolean; refused: boolean }> {
    const group = windows[0]!.group;
    const shard = fallbackShard(this.keys, windows, member);
    const keys = { ...this.shardKeys(shard, group), mirrored: this.keys.fallback(shard, group, "mirrored") };
    const more = new MoreKeys(FALLBACK_SLOT, keys);
    const groupWindow = windows.find((w) => w.scope.startsWith("group:"));
    const list = windows.map((w) => ({
      windowKey: more.of(this.keys.fallback(shard, w.group, w.scope)),
      max: w.scope === "bot" ? Math.floor(w.max / this.keys.shards) : w.max,
      windowMs: w.windowMs,
    }));
    return runScript(
      this.redis,
      FALLBACK_SLOT,
      keys,
      {
        windows: list,
        member,
        mode,
        ms,
        failingForMs: Date.now() - (this.failingSince ?? Date.now()),
        group: groupWindow?.scope ?? "",
        groupMs: groupWindow?.windowMs ?? 0,
        enterMs: groupWindow ? groupWindow.windowMs + GROUP_MARGIN_MS : 0,
        probingForMs: Date.now() - (this.probingSince ?? Date.now()),
      },
      { durability: this.durability, moreKeys: more },
    );
  }

  /** Whether the cluster (one master that answers) marks the master of the bot's slot as failed. */
  private botSlotDown(bot: SendWindow): Promise<boolean> {
    const now = Date.now();
    if (this.topology && now - this.topology.at < TOPOLOGY_MS) return this.topology.down;
    const slot = calculateSlot(this.keys.rate(bot.group, bot.scope));
    const down = this.readTopology(slot);
    this.topology = { at: now, down };
    return down;
  }

  private async readTopology(slot: number): Promise<boolean> {
    if (!(this.redis instanceof Cluster)) return false;
    for (const node of this.redis.nodes("master")) {
      const text = await within(node.call("CLUSTER", "NODES") as Promise<unknown>, SLOW_MS / 2);
      if (typeof text === "string") return ownerFailed(text, slot);
    }
    return false;
  }

  /** Keeps one probe of the bot's windows going while in the fallback: its answer ends it. */
  private startProbe(bot: SendWindow): void {
    if (this.probing) return;
    this.probing = true;
    const loop = async (): Promise<void> => {
      while (this.failingSince !== undefined) {
        const sentAt = Date.now();
        const answered = await within(this.probe([bot]), SLOW_MS);
        if (answered !== undefined) this.ok();
        else this.failing(sentAt);
        await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS).unref());
      }
    };
    void loop().finally(() => {
      this.probing = false;
    });
  }
}
