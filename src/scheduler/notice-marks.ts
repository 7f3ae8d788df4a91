import { z } from "zod";
import { sleep } from "../core/retry.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Durability } from "./durable-write.js";
import { declareScript, runScript } from "./lua-script.js";
import type { SchedulerKeys } from "./scheduler-keys.js";

/** notice-marks.lua: a receiver's mark that its notices sent without a slot are in the windows, or the count of those not marked. */
export const NOTICE_MARKS = declareScript({
  file: new URL("./lua/notice-marks.lua", import.meta.url),
  keys: ["marks"],
  args: z.object({
    mode: z.enum(["mark", "pending", "probe"]),
    receiver: z.string().optional(),
    notAfter: z.number().optional(),
    agoMs: z.number().optional(),
    staleMs: z.number(),
  }),
  reply: z.object({ now: z.number(), taken: z.boolean(), pending: z.number() }),
});

/**
 * How long a receiver's mark is kept without a new one. A receiver marks every second
 * while it runs (src/edge/unbooked-notices.ts); an outage longer than this forgets it,
 * and the first bookings after it do not wait for it.
 */
const KEEP_MS = 3_600_000;

/**
 * A receiver whose last mark came this long before an outage began (as the booking
 * process saw it begin) was gone by then, and is not waited for: a running one marks
 * every second, and a process sees an outage some seconds after it began at worst.
 */
const GONE_MS = 30_000;

/** How often the first bookings after an outage ask whether every receiver has marked. */
const ASK_EVERY_MS = 50;

/**
 * The longest the first bookings after an outage wait for receivers' marks: a receiver
 * reaches Redis again up to one reconnect back-off (2 s, src/sessions/redis-client-builder.ts)
 * after the booking process does, then records its notices and marks within ~50 ms.
 */
const AWAIT_MARKS_MS = 3000;

/**
 * The receivers' marks of a group's send windows that every outage notice they sent
 * without a slot (Redis refusing or out of reach) is in the windows. After an outage
 * the first bookings wait until each receiver that ran through it has marked since it
 * began: the processes reach Redis again up to a reconnect back-off apart, and a
 * booking made before a receiver's notice is in the windows passes their limits with it.
 */
export class NoticeMarks {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SchedulerKeys,
    private readonly durability: Durability,
  ) {}

  /**
   * Marks `receiver`'s notices sent without a slot as all in `group`'s windows now, unless
   * Redis runs the mark after `notAfter` (Redis ms); returns Redis' time and whether it took it.
   */
  async mark(group: string, receiver: string, notAfter?: number): Promise<{ now: number; taken: boolean }> {
    const reply = await runScript(
      this.redis,
      NOTICE_MARKS,
      { marks: this.keys.noticeMarks(group) },
      { mode: "mark", receiver, ...(notAfter === undefined ? {} : { notAfter }), staleMs: KEEP_MS },
      { durability: this.durability },
    );
    return { now: reply.now, taken: reply.taken };
  }

  /** Asks Redis to take a write that changes nothing, in `group`'s slot; throws its refusal. */
  async probe(group: string): Promise<void> {
    await runScript(
      this.redis,
      NOTICE_MARKS,
      { marks: this.keys.noticeMarks(group) },
      { mode: "probe", staleMs: KEEP_MS },
      { durability: this.durability },
    );
  }

  /** How many of `group`'s receivers that ran before `since` (local ms) have not marked since; throws Redis' refusal. */
  async pending(group: string, since: number): Promise<number> {
    const reply = await runScript(
      this.redis,
      NOTICE_MARKS,
      { marks: this.keys.noticeMarks(group) },
      { mode: "pending", agoMs: Math.max(0, Date.now() - since), staleMs: GONE_MS },
    );
    return reply.pending;
  }

  /**
   * Waits until every receiver of `group` that ran before `since` (local ms: when this
   * process first saw the outage) has marked since, for AWAIT_MARKS_MS at most (a
   * receiver still out of reach then cannot send either); throws Redis' refusal.
   */
  async awaitMarked(group: string, since: number): Promise<void> {
    const deadline = Date.now() + AWAIT_MARKS_MS;
    while ((await this.pending(group, since)) > 0 && Date.now() < deadline) await sleep(ASK_EVERY_MS);
  }
}
