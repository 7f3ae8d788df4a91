import type { Answer } from "../../../src/core/answer.js";
import type { Reply } from "../../../src/core/reply.js";
import type { TestRedis } from "../redis.js";

/** Every Redis key that belongs to one room (in its shard, named by it), so a test can see what a stranger left. */
export async function roomKeys(db: TestRedis, room: string): Promise<string[]> {
  const start = db.schedulerKeys.inbox(room).slice(0, -"inbox".length);
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await db.redis.scan(cursor, "MATCH", `${db.prefix}:*`, "COUNT", 1000);
    cursor = next;
    found.push(...keys.filter((k) => k.startsWith(start)));
  } while (cursor !== "0");
  return found.map((k) => k.slice(start.length)).sort();
}

/** The neutral reply the engine makes of a router's Answer (tokens as the engine forms them). */
export function replyOf(answer: Answer): Reply {
  return {
    blocks: [
      {
        type: "answer",
        ok: answer.ok,
        answer: answer.answer,
        items: answer.items,
        caveat: answer.caveat ?? null,
      },
    ],
    options: answer.options.map((label, i) => ({ token: `offer.${i + 1}`, label })),
    offerId: "offer",
  };
}
