import type { z } from "zod";
import type { Inbox } from "../core/adapter.js";
import type { FloodLimitSchema } from "../core/admission.js";
import { type Admission } from "../core/admission.js";
import type { InboundEvent } from "../core/event.js";
import type { SchedulerScripts } from "./scheduler-scripts.js";
import { edgeTexts } from "../edge/edge-texts.js";

/** Inbound flood limits, from `limits` in the configuration. */
export interface FloodLimits {
  turnsPerMinute: number;
  roomQueueCap: number;
}

/** What the gate says about one inbound event. */
export type FloodVerdict =
  | { admit: true }
  /** Not admitted; `notice` is the one line to send, or undefined when it was already sent. */
  | { admit: false; notice: string | undefined };

/** What the gate did with an event it was asked to queue: queued (`fresh` false for a duplicate) or refused. */
export type FloodEnqueue = { admit: true; fresh: boolean } | { admit: false; notice: string | undefined };

/**
 * Inbound flood control at the edge: a person may start `turnsPerMinute` turns a minute
 * and a room may hold `roomQueueCap` waiting events. The excess is not queued; the person
 * gets one notice per kind until the limit's window has passed. The limits are checked
 * by Redis' clock in Lua (src/scheduler/lua/flood.lua), in the enqueue script itself when the
 * inbox can, so that an admitted event costs one round trip.
 */
export class FloodGate {
  constructor(
    private readonly scripts: SchedulerScripts,
    private readonly limits: FloodLimits,
  ) {}

  /**
   * Whether one more event of this person in this room may be queued (counting it when
   * so): for an event that costs work to build, checked before that work.
   */
  async check(room: string, userId: string): Promise<FloodVerdict> {
    const reply = await this.scripts.intake.checkFlood({ room, userId, ...this.limits });
    if (reply.kind === "admitted") return { admit: true };
    return { admit: false, notice: this.notice(reply.limit, reply.noticeDue) };
  }

  /** Queues the event unless its sender is over a limit: one round trip when the inbox checks limits itself. */
  async enqueue(inbox: Inbox, event: InboundEvent, userId: string): Promise<FloodEnqueue> {
    if (!inbox.enqueueLimited) {
      const verdict = await this.check(event.room, userId);
      return verdict.admit ? { admit: true, fresh: await inbox.enqueue(event) } : verdict;
    }
    const admission: Admission = await inbox.enqueueLimited(event, {
      userId,
      turnsPerMinute: this.limits.turnsPerMinute,
      roomQueueCap: this.limits.roomQueueCap,
    });
    if (admission.result === "refused")
      return { admit: false, notice: this.notice(admission.limit, admission.noticeDue) };
    return { admit: true, fresh: admission.result === "queued" };
  }

  private notice(limit: z.infer<typeof FloodLimitSchema>, due: boolean): string | undefined {
    if (!due) return undefined;
    return limit === "queue"
      ? edgeTexts.queueFull(this.limits.roomQueueCap)
      : edgeTexts.tooFast(this.limits.turnsPerMinute);
  }
}
