import type { RedisClient } from "./redis-connection.js";
import { TaskRecordSchema, type TaskLedger, type TaskRecord } from "../namespace/task-call.js";
import type { Keys } from "./keys.js";
import { safeJson } from "../core/safe-json.js";

/** How long a started task's id is kept: as long as roomgate asks servers to keep the task. */
const KEEP_MS = 24 * 3600_000;

/**
 * The task ids that running turns' calls started, in Redis under the room's hash tag,
 * so that a turn retried after a crash polls the task it started instead of starting
 * another. Kept (not deleted) once the result is read: a turn retried after that
 * fetches the same result again.
 */
export class RedisTaskLedger implements TaskLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  async get(room: string, callKey: string): Promise<TaskRecord | undefined> {
    const raw = await this.redis.get(this.keys.task(room, callKey));
    const parsed = TaskRecordSchema.safeParse(raw === null ? undefined : safeJson(raw));
    return parsed.success ? parsed.data : undefined;
  }

  async set(room: string, callKey: string, record: TaskRecord): Promise<void> {
    await this.redis.set(this.keys.task(room, callKey), JSON.stringify(record), "PX", KEEP_MS);
  }
}
