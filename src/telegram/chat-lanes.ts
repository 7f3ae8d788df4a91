import type { Update } from "grammy/types";
import type { Logger } from "../core/log.js";
import { sleep, type Abortable } from "../core/retry.js";
import { loggableError } from "./loggable-error.js";
import type { UpdateAside } from "./update-aside.js";

/** The longest wait between two tries to set aside updates no shard took. */
const ASIDE_RETRY_MS = 1000;

/**
 * An update not queued within this long is set aside with its chat's later ones, as
 * one refused is: a command to a slot whose master is gone may wait for it rather than
 * fail (the client reconnecting), and the batch must not wait with it.
 */
const ASIDE_AFTER_MS = 1000;

/** One update in a chat's lane, settled once it is queued or set aside. */
interface Item {
  update: Update;
  /** Kept in Redis (UpdateAside) until queued. */
  aside: boolean;
  settle: () => void;
  fail: (err: unknown) => void;
  settled: Promise<void>;
}

/** A chat's updates not queued yet, in their order; `blocked` while its first one is refused. */
interface Lane {
  items: Item[];
  blocked: boolean;
}

/**
 * Queues each chat's updates in their order, chats side by side and apart: a chat
 * whose update cannot be queued (its room's Cluster slot range down) holds only its
 * own later updates. Those are set aside in Redis (src/telegram/update-aside.ts) so
 * that the poller may confirm them to Telegram and take the next batch; they are
 * queued, still in order, when the chat's first update is.
 */
export class ChatLanes {
  private readonly lanes = new Map<string, Lane>();
  /** Every update in a lane, by id: one delivered again (a webhook's retry) joins its first copy. */
  private readonly inLane = new Map<number, Item>();

  constructor(
    private readonly deps: {
      /** Queues one update, retrying until done; calls `refused` after its first failure. Rejects only when stopping. */
      enqueue: (update: Update, refused: () => void) => Promise<void>;
      aside: UpdateAside;
      log: Logger;
      signal: () => Abortable;
    },
  ) {}

  /**
   * Adds each update to the end of its chat's lane; each one's promise resolves once it
   * is queued or set aside (so that confirming it to Telegram loses nothing), and
   * rejects when stopping before that. `kept` marks updates read back from Redis (set
   * aside already). An update still in a lane is not added again: its promise is the
   * first copy's.
   */
  pushAll(updates: Update[], kept = false): Promise<void>[] {
    // A batch with a group's migration to a supergroup is one sequence, as Telegram sent
    // it, except for chats held already: their order comes first.
    const migrating = updates.some((u) => chatOf(u) === MIGRATION);
    return updates.map((u) => {
      const chat = chatOf(u);
      return this.push(u, migrating && !this.lanes.has(chat) ? MIGRATION : chat, kept);
    });
  }

  private push(update: Update, key: string, kept: boolean): Promise<void> {
    const known = this.inLane.get(update.update_id);
    if (known) return known.settled;
    let lane = this.lanes.get(key);
    const fresh = lane === undefined;
    if (!lane) {
      lane = { items: [], blocked: false };
      this.lanes.set(key, lane);
    }
    const item = newItem(update, kept);
    lane.items.push(item);
    this.inLane.set(update.update_id, item);
    if (kept) item.settle();
    else if (lane.blocked) void this.setAside(lane);
    if (fresh) void this.run(key, lane);
    return item.settled;
  }

  /** Works a lane's updates in order until it is empty. */
  private async run(key: string, lane: Lane): Promise<void> {
    try {
      while (lane.items.length > 0) {
        const item = lane.items[0]!;
        const refused = () => {
          if (lane.blocked) return;
          lane.blocked = true;
          void this.setAside(lane);
        };
        const slow = setTimeout(refused, ASIDE_AFTER_MS);
        try {
          await this.deps.enqueue(item.update, refused);
        } finally {
          clearTimeout(slow);
        }
        lane.items.shift();
        this.inLane.delete(item.update.update_id);
        lane.blocked = false;
        item.settle();
        if (item.aside) this.deps.aside.remove(item.update.update_id);
      }
    } catch (err) {
      // Stopping: what is neither queued nor set aside stays unconfirmed and arrives again.
      for (const item of lane.items) {
        item.fail(err);
        this.inLane.delete(item.update.update_id);
      }
    } finally {
      this.lanes.delete(key);
    }
  }

  /** Sets aside every update of a blocked lane not kept yet, retrying until a shard takes them. */
  private async setAside(lane: Lane): Promise<void> {
    const todo = lane.items.filter((i) => !i.aside);
    if (todo.length === 0) return;
    for (const item of todo) item.aside = true;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.deps.aside.put(todo.map((i) => i.update));
        for (const item of todo) item.settle();
        return;
      } catch (err) {
        this.deps.log.warn(
          { err: loggableError(err), updateIds: todo.map((i) => i.update.update_id) },
          "telegram: could not set aside updates that wait for their room's shard; retrying",
        );
        try {
          await sleep(Math.min(ASIDE_RETRY_MS, 100 * 2 ** attempt), this.deps.signal());
        } catch {
          return;
        }
      }
    }
  }
}

function newItem(update: Update, aside: boolean): Item {
  let settle!: () => void;
  let fail!: (err: unknown) => void;
  const settled = new Promise<void>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  // A lane failing on stop rejects items nobody waits for any more.
  settled.catch(() => undefined);
  return { update, aside, settle, fail, settled };
}

/** The lane of a group's migration to a supergroup (and the rest of its batch). */
const MIGRATION = "migration";

/** The lane an update goes in: its chat, or the migrations' own. */
function chatOf(update: Update): string {
  const message = update.message;
  if (message?.migrate_to_chat_id !== undefined || message?.migrate_from_chat_id !== undefined)
    return MIGRATION;
  const chat =
    message?.chat.id ??
    update.edited_message?.chat.id ??
    update.callback_query?.message?.chat.id ??
    update.my_chat_member?.chat.id;
  return chat === undefined ? "other" : String(chat);
}
