import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";

/** One event as the stand-in stores it; `pos` orders all events of the server (the sync stream). */
export interface StandinEvent {
  event_id: string;
  room_id: string;
  type: string;
  sender: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
  state_key?: string;
  pos: number;
}

interface Room {
  id: string;
  events: StandinEvent[];
  state: Map<string, StandinEvent>;
}

const stateKeyOf = (type: string, key: string): string => `${type}\u0000${key}`;

/**
 * The stand-in's rooms as one ordered stream of events, shared by the HTTP layer and
 * the tests: every change is an event with a stream position, which is what sync
 * tokens count.
 */
export class StandinRooms {
  readonly changed = new EventEmitter();
  private readonly rooms = new Map<string, Room>();
  private readonly byId = new Map<string, StandinEvent>();
  private pos = 0;
  private lastTs = 0;
  /** How far each sender's server clock is off, applied to the events they send (federation skew). */
  readonly clockSkew = new Map<string, number>();
  private roomCounter = 0;

  constructor(readonly serverName: string) {
    this.changed.setMaxListeners(0);
  }

  /** The current stream position (the next sync token). */
  get position(): number {
    return this.pos;
  }

  /** Takes the next stream position for something that is not a room event (to-device, key changes) and wakes syncs. */
  tick(): number {
    this.changed.emit("tick");
    return ++this.pos;
  }

  /** Creates a room with its creator joined and power levels (creator 100, others from `powerLevels`). */
  create(creator: string, options: { name?: string; powerLevels?: Record<string, number> } = {}): string {
    const id = `!${options.name ?? "room"}${++this.roomCounter}_${randomBytes(3).toString("hex")}:${this.serverName}`;
    this.rooms.set(id, { id, events: [], state: new Map() });
    this.append(id, creator, "m.room.create", { creator, room_version: "10" }, "");
    this.append(id, creator, "m.room.member", { membership: "join" }, creator);
    this.append(
      id,
      creator,
      "m.room.power_levels",
      {
        users: { [creator]: 100, ...options.powerLevels },
        users_default: 0,
        events_default: 0,
        state_default: 50,
      },
      "",
    );
    this.append(id, creator, "m.room.join_rules", { join_rule: "invite" }, "");
    return id;
  }

  /** Whether a room exists. */
  has(roomId: string): boolean {
    return this.rooms.has(roomId);
  }

  /** Appends an event (a state event when `stateKey` is given) and wakes waiting syncs. */
  append(
    roomId: string,
    sender: string,
    type: string,
    content: Record<string, unknown>,
    stateKey?: string,
  ): StandinEvent {
    const room = this.room(roomId);
    this.lastTs = Math.max(Date.now(), this.lastTs + 1); // strictly increasing, like one server's clock per room
    const event: StandinEvent = {
      event_id: `$${randomBytes(12).toString("base64url")}`,
      room_id: roomId,
      type,
      sender,
      origin_server_ts: this.lastTs + (this.clockSkew.get(sender) ?? 0),
      content,
      pos: ++this.pos,
      ...(stateKey === undefined ? {} : { state_key: stateKey }),
    };
    room.events.push(event);
    this.byId.set(event.event_id, event);
    if (stateKey !== undefined) room.state.set(stateKeyOf(type, stateKey), event);
    this.changed.emit("event", event);
    return event;
  }

  /** One event by id, if it is in that room. */
  event(roomId: string, eventId: string): StandinEvent | undefined {
    const event = this.byId.get(eventId);
    return event?.room_id === roomId ? event : undefined;
  }

  /** All events of a room in order. */
  events(roomId: string): StandinEvent[] {
    return [...this.room(roomId).events];
  }

  /** The current state event of a type and key. */
  stateEvent(roomId: string, type: string, key: string): StandinEvent | undefined {
    return this.room(roomId).state.get(stateKeyOf(type, key));
  }

  /** All current state events of a room. */
  state(roomId: string): StandinEvent[] {
    return [...this.room(roomId).state.values()];
  }

  /** A user's current membership and the event that set it. */
  membership(roomId: string, userId: string): { membership: string; event: StandinEvent } | undefined {
    const event = this.rooms.get(roomId)?.state.get(stateKeyOf("m.room.member", userId));
    const membership = event?.content.membership;
    return event && typeof membership === "string" ? { membership, event } : undefined;
  }

  /** Rooms where the user's membership is `membership`. */
  roomsWith(userId: string, membership: string): string[] {
    return [...this.rooms.keys()].filter((id) => this.membership(id, userId)?.membership === membership);
  }

  /** Events of any room after stream position `since`, in order. */
  eventsSince(roomId: string, since: number): StandinEvent[] {
    return this.room(roomId).events.filter((e) => e.pos > since);
  }

  private room(roomId: string): Room {
    const room = this.rooms.get(roomId);
    if (!room) throw new Error(`stand-in: no room ${roomId}`);
    return room;
  }
}

/** The client-event form of a stored event (what sync and /event return). */
export function clientEvent(event: StandinEvent, withRoomId = false): Record<string, unknown> {
  const { pos: _pos, room_id, ...rest } = event;
  return {
    ...rest,
    ...(withRoomId ? { room_id } : {}),
    unsigned: { age: Date.now() - event.origin_server_ts },
  };
}
