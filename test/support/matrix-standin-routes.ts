import { HttpError, StandinRouter, type Call, type Reply } from "./matrix-standin-http.js";
import { clientEvent, type StandinEvent, type StandinRooms } from "./matrix-standin-rooms.js";
import type { StandinKeys } from "./matrix-standin-keys.js";
import { syncReply } from "./matrix-standin-sync.js";

/** Largest event the stand-in accepts, in bytes of its JSON, as Synapse does for a whole PDU. */
export const MAX_EVENT_BYTES = 65_536;
/** The stand-in's media upload limit (`m.upload.size`), as a homeserver configures one. */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/** The parts of the stand-in's test API the endpoints act through, so requests and tests change rooms alike. */
export interface StandinActions {
  readonly rooms: StandinRooms;
  readonly serverName: string;
  readonly typing: { roomId: string; userId: string; typing: boolean }[];
  membership(roomId: string, userId: string): string | undefined;
  joinAs(roomId: string, userId: string): StandinEvent;
  invite(roomId: string, inviter: string, invitee: string): StandinEvent;
  setState(
    roomId: string,
    sender: string,
    type: string,
    key: string,
    content: Record<string, unknown>,
  ): StandinEvent;
  upload(data: Buffer, contentType: string): string;
  readonly keys: StandinKeys;
  /** The device an access token belongs to. */
  deviceOf(token: string): string;
}

const C = "/_matrix/client/v3";

/**
 * The client-server endpoints matrix-bot-sdk uses, with the server-side state only
 * requests reach (transaction ids, filters, account data).
 */
export function standinRoutes(
  hs: StandinActions,
  media: ReadonlyMap<string, { data: Buffer; contentType: string }>,
  isClosed: () => boolean,
): StandinRouter {
  const router = new StandinRouter();
  const route = router.add.bind(router);
  const txns = new Map<string, string>();
  const filters = new Map<string, unknown>();
  const accountData = new Map<string, unknown>();
  const joined = (roomId: string, userId: string): void => {
    if (!hs.rooms.has(roomId)) throw new HttpError(404, "M_NOT_FOUND", "no such room");
    if (hs.membership(roomId, userId) !== "join") throw new HttpError(403, "M_FORBIDDEN", "not in room");
  };

  route("GET", "/_matrix/client/versions", () => ({
    json: { versions: ["v1.1", "v1.5", "v1.11"], unstable_features: {} },
  }));
  route("GET", `${C}/account/whoami`, (c) => ({
    json: { user_id: c.userId, device_id: hs.deviceOf(c.token) },
  }));
  route("GET", `${C}/joined_rooms`, (c) => ({
    json: { joined_rooms: hs.rooms.roomsWith(c.userId, "join") },
  }));
  route("GET", `${C}/sync`, (c) => {
    const device = hs.deviceOf(c.token);
    return syncReply(c, hs.rooms, filters, isClosed, {
      syncPart: (since) => hs.keys.syncPart(c.userId, device, since),
      hasNews: (since) => hs.keys.hasNews(c.userId, device, since),
    });
  });
  hs.keys.routes(router);
  route("GET", `${C}/rooms/:room/joined_members`, (c) => {
    const roomId = c.params[0] ?? "";
    joined(roomId, c.userId);
    const members = hs.rooms
      .state(roomId)
      .filter((e) => e.type === "m.room.member" && e.content.membership === "join");
    return { json: { joined: Object.fromEntries(members.map((e) => [e.state_key, {}])) } };
  });
  route("GET", `${C}/rooms/:room/members`, (c) => {
    const roomId = c.params[0] ?? "";
    joined(roomId, c.userId);
    const members = hs.rooms.state(roomId).filter((e) => e.type === "m.room.member");
    return { json: { chunk: members.map((e) => clientEvent(e, true)) } };
  });
  route("POST", `${C}/user/:user/filter`, (c) => {
    const id = String(filters.size + 1);
    filters.set(`${c.userId}/${id}`, c.json);
    return { json: { filter_id: id } };
  });
  route("GET", `${C}/user/:user/filter/:id`, (c) => {
    const filter = filters.get(`${c.userId}/${c.params[1]}`);
    if (!filter) throw new HttpError(404, "M_NOT_FOUND", "no such filter");
    return { json: filter };
  });
  const join = (c: Call): Reply => {
    const roomId = c.params[0] ?? "";
    if (!hs.rooms.has(roomId)) throw new HttpError(404, "M_NOT_FOUND", "no such room");
    const membership = hs.membership(roomId, c.userId);
    const rule = hs.rooms.stateEvent(roomId, "m.room.join_rules", "")?.content.join_rule;
    if (membership !== "invite" && membership !== "join" && rule !== "public") {
      throw new HttpError(403, "M_FORBIDDEN", "you are not invited to this room");
    }
    if (membership !== "join") hs.joinAs(roomId, c.userId);
    return { json: { room_id: roomId } };
  };
  route("POST", `${C}/join/:room`, join);
  route("POST", `${C}/rooms/:room/join`, join);
  route("POST", `${C}/rooms/:room/leave`, (c) => {
    const roomId = c.params[0] ?? "";
    if (hs.membership(roomId, c.userId)) {
      hs.rooms.append(roomId, c.userId, "m.room.member", { membership: "leave" }, c.userId);
    }
    return { json: {} };
  });
  route("POST", `${C}/rooms/:room/invite`, (c) => {
    const roomId = c.params[0] ?? "";
    joined(roomId, c.userId);
    return { json: { event_id: hs.invite(roomId, c.userId, String(c.json.user_id)).event_id } };
  });
  route("PUT", `${C}/rooms/:room/send/:type/:txn`, (c) => {
    const [roomId = "", type = "", txn = ""] = c.params;
    // Idempotent per access token and transaction id, as the spec requires for retried sends.
    const txnKey = `${c.token}\u0000${txn}`;
    const previous = txns.get(txnKey);
    if (previous) return { json: { event_id: previous } };
    joined(roomId, c.userId);
    const size = Buffer.byteLength(
      JSON.stringify({
        room_id: roomId,
        sender: c.userId,
        type,
        content: c.json,
        origin_server_ts: Date.now(),
      }),
    );
    if (size > MAX_EVENT_BYTES) {
      throw new HttpError(413, "M_TOO_LARGE", `event is ${size} bytes, over ${MAX_EVENT_BYTES}`);
    }
    const event = hs.rooms.append(roomId, c.userId, type, c.json);
    txns.set(txnKey, event.event_id);
    return { json: { event_id: event.event_id } };
  });
  route("PUT", `${C}/rooms/:room/redact/:event/:txn`, (c) => {
    const [roomId = "", redacts = ""] = c.params;
    joined(roomId, c.userId);
    const event = hs.rooms.append(roomId, c.userId, "m.room.redaction", { ...c.json, redacts });
    return { json: { event_id: event.event_id } };
  });
  route("PUT", `${C}/rooms/:room/typing/:user`, (c) => {
    hs.typing.push({ roomId: c.params[0] ?? "", userId: c.userId, typing: c.json.typing === true });
    return { json: {} };
  });
  route("GET", `${C}/rooms/:room/state`, (c) => {
    const roomId = c.params[0] ?? "";
    joined(roomId, c.userId);
    return { json: hs.rooms.state(roomId).map((e) => clientEvent(e, true)) };
  });
  const getState = (c: Call): Reply => {
    const [roomId = "", type = "", key = ""] = c.params;
    joined(roomId, c.userId);
    const event = hs.rooms.stateEvent(roomId, type, key);
    if (!event) throw new HttpError(404, "M_NOT_FOUND", "no such state");
    return { json: event.content };
  };
  const putState = (c: Call): Reply => {
    const [roomId = "", type = "", key = ""] = c.params;
    joined(roomId, c.userId);
    return { json: { event_id: hs.setState(roomId, c.userId, type, key, c.json).event_id } };
  };
  route("GET", `${C}/rooms/:room/state/:type/:key`, getState);
  route("GET", `${C}/rooms/:room/state/:type`, getState);
  route("PUT", `${C}/rooms/:room/state/:type/:key`, putState);
  route("PUT", `${C}/rooms/:room/state/:type`, putState);
  route("GET", `${C}/rooms/:room/event/:event`, (c) => {
    const [roomId = "", eventId = ""] = c.params;
    joined(roomId, c.userId);
    const event = hs.rooms.event(roomId, eventId);
    if (!event) throw new HttpError(404, "M_NOT_FOUND", "no such event");
    return { json: clientEvent(event, true) };
  });
  const relations = (c: Call): Reply => {
    const [roomId = "", eventId = "", relType, eventType] = c.params;
    joined(roomId, c.userId);
    const chunk = hs.rooms.events(roomId).filter((e) => {
      const rel = e.content["m.relates_to"] as { event_id?: string; rel_type?: string } | undefined;
      return (
        rel?.event_id === eventId &&
        (!relType || rel.rel_type === relType) &&
        (!eventType || e.type === eventType)
      );
    });
    return { json: { chunk: chunk.map((e) => clientEvent(e, true)) } };
  };
  route("GET", "/_matrix/client/v1/rooms/:room/relations/:event", relations);
  route("GET", "/_matrix/client/v1/rooms/:room/relations/:event/:rel", relations);
  route("GET", "/_matrix/client/v1/rooms/:room/relations/:event/:rel/:type", relations);
  const accountKey = (c: Call): string => `${c.userId}/${c.params.join("/")}`;
  for (const path of [
    `${C}/user/:user/account_data/:type`,
    `${C}/user/:user/rooms/:room/account_data/:type`,
  ]) {
    route("GET", path, (c) => {
      if (c.params[0] !== c.userId) throw new HttpError(403, "M_FORBIDDEN", "not your account data");
      const data = accountData.get(accountKey(c));
      if (data === undefined) throw new HttpError(404, "M_NOT_FOUND", "no account data");
      return { json: data };
    });
    route("PUT", path, (c) => {
      if (c.params[0] !== c.userId) throw new HttpError(403, "M_FORBIDDEN", "not your account data");
      accountData.set(accountKey(c), c.json);
      return { json: {} };
    });
  }
  const download = (c: Call): Reply => {
    const [server, id = ""] = c.params;
    const item = server === hs.serverName ? media.get(id) : undefined;
    if (!item) throw new HttpError(404, "M_NOT_FOUND", "no such media");
    return { raw: item };
  };
  route("GET", "/_matrix/client/v1/media/download/:server/:id", download);
  route("GET", "/_matrix/media/v3/download/:server/:id", download);
  route("POST", "/_matrix/media/v3/upload", (c) => {
    if (c.body.length === 0) throw new HttpError(400, "M_BAD_JSON", "empty upload");
    if (c.body.length > MAX_UPLOAD_BYTES) {
      throw new HttpError(413, "M_TOO_LARGE", `upload is ${c.body.length} bytes, over ${MAX_UPLOAD_BYTES}`);
    }
    return {
      json: { content_uri: hs.upload(c.body, c.req.headers["content-type"] ?? "application/octet-stream") },
    };
  });
  return router;
}
