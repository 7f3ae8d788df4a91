import { createHash } from "node:crypto";
import type { RedisClient } from "./redis-connection.js";
import { z } from "zod";
import { maskSecrets } from "../core/log.js";
import { declareScript, runScript } from "../scheduler/lua-script.js";
import type { Keys } from "./keys.js";

/** expire-approvals.lua: records the approvals whose time ran out, each exactly once. */
const EXPIRE_APPROVALS = declareScript({
  file: new URL("./lua/expire-approvals.lua", import.meta.url),
  keys: ["open", "info", "trail"],
  args: z.object({ now: z.number(), minId: z.string(), limit: z.number() }),
  reply: z.object({ recorded: z.number() }),
});

/** What one entry of the trail records. */
export const AuditTypeSchema = z.enum([
  "approval.requested",
  "approval.granted",
  "approval.denied",
  "approval.expired",
  "call.destructive",
  "pairing.added",
  "pairing.removed",
]);
export type AuditType = z.infer<typeof AuditTypeSchema>;

/**
 * One entry of the audit trail (DESIGN §9): who did what, when, in which binding and
 * room; for calls the tool, the SHA-256 of its exact arguments and (unless the binding
 * says `audit.arguments: false`) the arguments themselves, with any secret masked.
 */
export const AuditEntrySchema = z.object({
  type: AuditTypeSchema,
  /** When it happened, ms since the epoch. */
  at: z.number(),
  binding: z.string(),
  room: z.string().optional(),
  /** Who did it: the approver, the person who paired, the operator who removed someone. */
  by: z.string().optional(),
  /** Who asked for the call an approval is about. */
  requester: z.string().optional(),
  /** The user a pairing added or removed. */
  user: z.string().optional(),
  tool: z.string().optional(),
  argumentsHash: z.string().optional(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  /** Arguments over `audit.maxArgumentBytes`: the first that many bytes of their JSON, in place of `arguments`. */
  argumentsHead: z.string().optional(),
  /** The size of those arguments' JSON, in bytes. */
  argumentsBytes: z.number().int().optional(),
  /** The approval an entry belongs to, to follow one call from request to result. */
  approval: z.string().optional(),
  /** Everyone whose approval the call had, in order. */
  approvedBy: z.array(z.string()).optional(),
  /** Approvals a call needed. */
  needed: z.number().int().optional(),
  /** How a destructive call ended: its result, an error result, a failure or a cancel. */
  outcome: z.enum(["ok", "error", "failed", "cancelled"]).optional(),
  /** Why an approval was denied or a pairing removed, in a few words. */
  reason: z.string().optional(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** An exported entry: its stream id (time-ordered, unique) and the entry. */
export type ExportedEntry = { id: string } & AuditEntry;

/** The arguments as JSON with the keys in order, so that equal arguments hash equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The SHA-256 (hex) of a call's exact arguments: what ties an approval to the call made. */
export function argumentsHash(args: Record<string, unknown>): string {
  return createHash("sha256").update(canonical(args)).digest("hex");
}

/** What a call entry carries of its arguments: always the hash, the arguments when the binding keeps them. */
export function callArguments(
  args: Record<string, unknown>,
  keep: boolean,
): Pick<AuditEntry, "argumentsHash" | "arguments"> {
  return { argumentsHash: argumentsHash(args), ...(keep ? { arguments: args } : {}) };
}

/** Default of `audit.maxArgumentBytes`. */
export const DEFAULT_MAX_ARGUMENT_BYTES = 1024;

/**
 * An entry whose arguments are larger than `maxBytes` of JSON keeps their hash (what
 * ties an approval to its call), their size and their first `maxBytes` bytes, not the
 * whole: who calls decides how large they are, and the trail is kept for months.
 */
export function capArguments(entry: AuditEntry, maxBytes: number): AuditEntry {
  if (entry.arguments === undefined) return entry;
  const json = canonical(entry.arguments);
  const bytes = Buffer.byteLength(json);
  if (bytes <= maxBytes) return entry;
  const { arguments: _whole, ...rest } = entry;
  // Cut at a character boundary: a split UTF-8 sequence would decode as U+FFFD.
  const head = Buffer.from(json)
    .subarray(0, maxBytes)
    .toString("utf8")
    .replace(/\uFFFD$/u, "");
  return { ...rest, argumentsHead: head, argumentsBytes: bytes };
}

/**
 * The audit trail in Redis: one stream (`Keys.auditTrail`) trimmed by age on every
 * append, plus the approvals still waiting, so that one that expires is recorded too
 * (by whichever process sweeps first, exactly once). Entries are JSON with registered
 * secrets masked; the trail never holds a token or a password.
 */
export class AuditLog {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly keepMs: number,
    /** Largest arguments an entry keeps whole (`audit.maxArgumentBytes`). */
    private readonly maxArgumentBytes = DEFAULT_MAX_ARGUMENT_BYTES,
  ) {}

  private encode(entry: AuditEntry): string {
    // Masked before encoding: a secret with a `"` or `\\` in it is escaped by JSON, out of a mask's reach;
    // and before the arguments are cut, so no cut leaves part of a secret unmasked.
    const masked = AuditEntrySchema.parse(maskSecrets(entry));
    return JSON.stringify(capArguments(masked, this.maxArgumentBytes));
  }

  private minId(now: number): string {
    return String(Math.max(0, now - this.keepMs));
  }

  /**
   * Appends one entry, trimming what is older than the trail keeps. The trim is exact
   * (no `~`): an approximate one only drops whole stream nodes of 100 entries, so a
   * quiet trail would keep entries past their age for ever.
   */
  async record(entry: AuditEntry): Promise<void> {
    await this.redis.xadd(
      this.keys.auditTrail,
      "MINID",
      this.minId(Date.now()),
      "*",
      "entry",
      this.encode(entry),
    );
  }

  /**
   * Notes an approval that waits for a decision: `expired` is what the trail records if
   * none comes by `expiresAt`. Recorded with the request itself, in one slot.
   */
  async opened(id: string, requested: AuditEntry, expired: AuditEntry, expiresAt: number): Promise<void> {
    await this.redis
      .multi()
      .xadd(this.keys.auditTrail, "MINID", this.minId(Date.now()), "*", "entry", this.encode(requested))
      .zadd(this.keys.openApprovals, expiresAt, id)
      .hset(this.keys.openApprovalInfo, id, this.encode(expired))
      .exec();
  }

  /** The approval was decided (granted, denied): it will not be recorded as expired. */
  async closed(id: string): Promise<void> {
    await this.redis.multi().zrem(this.keys.openApprovals, id).hdel(this.keys.openApprovalInfo, id).exec();
  }

  /** Records the approvals whose time ran out; returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    const reply = await runScript(
      this.redis,
      EXPIRE_APPROVALS,
      { open: this.keys.openApprovals, info: this.keys.openApprovalInfo, trail: this.keys.auditTrail },
      { now, minId: this.minId(now), limit: 100 },
    );
    return reply.recorded;
  }

  /**
   * Entries since `sinceMs`, oldest first, read a page at a time; an unreadable entry is
   * skipped. Never older than the trail keeps, even before the next append trims them.
   */
  async *since(sinceMs: number, pageSize = 500, now = Date.now()): AsyncGenerator<ExportedEntry> {
    let start = String(Math.max(0, Math.floor(sinceMs), now - this.keepMs));
    for (;;) {
      const page = await this.redis.xrange(this.keys.auditTrail, start, "+", "COUNT", pageSize);
      for (const [id, fields] of page) {
        const raw = fields[fields.indexOf("entry") + 1];
        try {
          const entry = AuditEntrySchema.parse(JSON.parse(raw ?? ""));
          yield { id, ...entry };
        } catch {
          continue;
        }
      }
      if (page.length < pageSize) return;
      start = `(${page.at(-1)![0]}`;
    }
  }
}
