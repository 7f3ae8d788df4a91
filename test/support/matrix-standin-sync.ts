import { parseJson, type Call, type Reply } from "./matrix-standin-http.js";
import { clientEvent, type StandinEvent, type StandinRooms } from "./matrix-standin-rooms.js";

/** What sync adds for end-to-end encryption (matrix-standin-keys.ts), per device. */
export interface SyncCrypto {
  syncPart(since: number | null): Record<string, unknown>;
  hasNews(since: number): boolean;
}

/**
 * Answers /sync with what changed for the user since the `since` token, long-polling up
 * to `timeout` ms when nothing has; closing the stand-in ends the wait.
 */
export async function syncReply(
  c: Call,
  rooms: StandinRooms,
  filters: ReadonlyMap<string, unknown>,
  isClosed: () => boolean,
  crypto?: SyncCrypto,
): Promise<Reply> {
  const sinceParam = c.query.get("since");
  const since = sinceParam ? Number(sinceParam.replace(/^s/, "")) : null;
  const limit = timelineLimit(c, filters);
  const timeout = Number(c.query.get("timeout") ?? 0);
  let body = syncBody(rooms, c.userId, since, limit);
  const quiet = (): boolean => body.empty && !(since !== null && crypto?.hasNews(since));
  if (since !== null && quiet() && timeout > 0 && !isClosed()) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        rooms.changed.off("event", done);
        rooms.changed.off("tick", later);
        rooms.changed.off("close", done);
        resolve();
      };
      // A tick is emitted before its position is taken: look once it is.
      const later = (): void => void setImmediate(done);
      const timer = setTimeout(done, timeout);
      rooms.changed.on("event", done);
      rooms.changed.on("tick", later);
      rooms.changed.on("close", done);
    });
    body = syncBody(rooms, c.userId, since, limit);
  }
  return { json: crypto ? { ...(body.json as object), ...crypto.syncPart(since) } : body.json };
}

function timelineLimit(c: Call, filters: ReadonlyMap<string, unknown>): number {
  const param = c.query.get("filter");
  let filter: unknown = undefined;
  if (param?.startsWith("{")) filter = parseJson(Buffer.from(param));
  else if (param) filter = filters.get(`${c.userId}/${param}`);
  const limit = (filter as { room?: { timeline?: { limit?: unknown } } } | undefined)?.room?.timeline?.limit;
  return typeof limit === "number" ? limit : 20;
}

function syncBody(
  rooms: StandinRooms,
  userId: string,
  since: number | null,
  limit: number,
): { empty: boolean; json: unknown } {
  const next = rooms.position;
  const join: Record<string, unknown> = {};
  const invite: Record<string, unknown> = {};
  const leave: Record<string, unknown> = {};
  for (const roomId of rooms.roomsWith(userId, "join")) {
    const joinedAt = rooms.membership(roomId, userId)?.event.pos ?? 0;
    // Like Synapse, a newly joined room arrives with recent history and its state.
    const fresh = since === null || joinedAt > since;
    const events = fresh ? rooms.events(roomId) : rooms.eventsSince(roomId, since);
    if (events.length === 0) continue;
    const timeline = events.slice(-limit);
    join[roomId] = {
      timeline: { events: timeline.map((e) => clientEvent(e)), limited: timeline.length < events.length },
      state: { events: fresh ? rooms.state(roomId).map((e) => clientEvent(e)) : [] },
      ephemeral: { events: [] },
      account_data: { events: [] },
    };
  }
  for (const roomId of rooms.roomsWith(userId, "invite")) {
    const member = rooms.membership(roomId, userId)?.event;
    if (!member || (since !== null && member.pos <= since)) continue;
    const stripped = [rooms.stateEvent(roomId, "m.room.join_rules", ""), member]
      .filter((e): e is StandinEvent => e !== undefined)
      .map((e) => ({ type: e.type, state_key: e.state_key, sender: e.sender, content: e.content }));
    invite[roomId] = { invite_state: { events: stripped } };
  }
  for (const roomId of [...rooms.roomsWith(userId, "leave"), ...rooms.roomsWith(userId, "ban")]) {
    const member = rooms.membership(roomId, userId)?.event;
    if (!member || since === null || member.pos <= since) continue;
    leave[roomId] = { timeline: { events: [clientEvent(member)] } };
  }
  const empty = Object.keys(join).length + Object.keys(invite).length + Object.keys(leave).length === 0;
  return {
    empty,
    json: {
      next_batch: `s${next}`,
      rooms: { join, invite, leave },
      account_data: { events: [] },
      presence: { events: [] },
    },
  };
}
