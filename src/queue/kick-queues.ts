import { Queue, type ConnectionOptions } from "bullmq";
import { z } from "zod";
import type { Keys } from "../sessions/keys.js";
import { laneOf } from "./lanes.js";

/** A kick job's payload: "this room has events waiting", parsed when a worker takes it. */
export const KickSchema = z.object({ room: z.string().min(1) });
export type Kick = z.infer<typeof KickSchema>;

/** The bullmq queues of room kicks, one per lane, created on first use. */
export class KickQueues {
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly connection: ConnectionOptions,
    private readonly keys: Keys,
  ) {}

  /** Asks some worker of the room's lane to drain the room's inbox. */
  async kick(room: string): Promise<void> {
    const lane = laneOf(room);
    let queue = this.queues.get(lane);
    if (!queue) {
      queue = new Queue(this.keys.turnQueue(lane), {
        connection: this.connection,
        prefix: this.keys.bullPrefix,
      });
      this.queues.set(lane, queue);
    }
    const kick: Kick = { room };
    await queue.add("kick", kick, {
      removeOnComplete: true,
      removeOnFail: { count: 1000 },
      attempts: 5,
      backoff: { type: "exponential", delay: 500 },
    });
  }

  /** Closes every queue connection. */
  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
