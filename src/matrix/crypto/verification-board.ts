import { z } from "zod";
import type { RedisClient } from "../../sessions/redis-connection.js";

/** One verification of the bot as the operator sees it. */
export const VerificationEntrySchema = z.object({
  flowId: z.string(),
  userId: z.string(),
  deviceId: z.string().optional(),
  roomId: z.string().optional(),
  /** requested → emoji (waiting for the operator) → confirmed → done; or cancelled. */
  state: z.enum(["requested", "emoji", "confirmed", "done", "cancelled"]),
  emoji: z.array(z.object({ symbol: z.string(), description: z.string() })).optional(),
  decimals: z.array(z.number()).optional(),
  reason: z.string().optional(),
  updatedAt: z.number(),
});
export type VerificationEntry = z.infer<typeof VerificationEntrySchema>;

/** What the operator answered: the emoji match (confirm) or not (cancel). */
export type VerificationAnswer = "confirm" | "cancel";

/** How long a finished or abandoned verification stays listed. */
const KEEP_MS = 10 * 60_000;

/**
 * Where the device's owner shows each verification of the bot to the operator, and the
 * operator answers (`roomgate matrix verify`, from any machine): entries by flow id in
 * one hash, answers in another. The owner never confirms by itself.
 */
export class VerificationBoard {
  constructor(
    private readonly redis: RedisClient,
    private readonly entriesKey: string,
    private readonly answersKey: string,
  ) {}

  async put(entry: Omit<VerificationEntry, "updatedAt">): Promise<void> {
    await this.redis.hset(this.entriesKey, entry.flowId, JSON.stringify({ ...entry, updatedAt: Date.now() }));
  }

  /** The verifications listed now, newest first; old finished ones are dropped. */
  async list(): Promise<VerificationEntry[]> {
    const raw = await this.redis.hgetall(this.entriesKey);
    const out: VerificationEntry[] = [];
    for (const [flowId, json] of Object.entries(raw)) {
      const parsed = VerificationEntrySchema.safeParse(JSON.parse(json));
      if (parsed.success && Date.now() - parsed.data.updatedAt < KEEP_MS) out.push(parsed.data);
      else await this.redis.hdel(this.entriesKey, flowId);
    }
    return out.sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async answer(flowId: string, answer: VerificationAnswer): Promise<void> {
    await this.redis.hset(this.answersKey, flowId, answer);
  }

  /** The operator's answer for a flow, taken (read once). */
  async takeAnswer(flowId: string): Promise<VerificationAnswer | undefined> {
    const answer = await this.redis.hget(this.answersKey, flowId);
    if (answer !== "confirm" && answer !== "cancel") return undefined;
    await this.redis.hdel(this.answersKey, flowId);
    return answer;
  }
}
