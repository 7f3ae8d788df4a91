import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { clientEvent, StandinRooms, type StandinEvent } from "./matrix-standin-rooms.js";

export type { StandinEvent } from "./matrix-standin-rooms.js";

/** Largest event the stand-in accepts, in bytes of its JSON, as Synapse does for a whole PDU. */
export const MAX_EVENT_BYTES = 65_536;

/** A failure the stand-in answers instead of handling the next matching requests. */
export interface InjectedFailure {
  status: number;
  errcode?: string;
  retryAfterMs?: number;
  /** Which requests fail, by path; default: event sends. */
  path?: RegExp;
}

/** One request the stand-in answered, for assertions. */
export interface StandinRequest {
  method: string;
  path: string;
  status: number;
  userId?: string;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly errcode: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

interface Call {
  method: string;
  params: string[];
  query: URLSearchParams;
  body: Buffer;
  json: Record<string, unknown>;
  userId: string;
  token: string;
  req: IncomingMessage;
}

type Handler = (call: Call) => Promise<Reply> | Reply;
interface Route {
  method: string;
  parts: string[];
  handler: Handler;
}
type Reply = { status?: number; json?: unknown; raw?: { data: Buffer; contentType: string } };

const C = "/_matrix/client/v3";

/**
 * A Matrix homeserver stand-in for tests: a real HTTP server on loopback that speaks
 * the client-server endpoints matrix-bot-sdk uses (long-poll sync with invites,
 * idempotent sends per access token and transaction id, state, typing, account
 * data, media, relations), enforces the event size limit, can fail the next
 * requests with 429 or 5xx, and lets tests act as people and read what the bot sent.
 */
export class MatrixHomeserverStandin {
  readonly rooms: StandinRooms;
  readonly requests: StandinRequest[] = [];
  readonly typing: { roomId: string; userId: string; typing: boolean }[] = [];
  private readonly tokens = new Map<string, string>();
  private readonly txns = new Map<string, string>();
  private readonly filters = new Map<string, unknown>();
  private readonly accountData = new Map<string, unknown>();
  private readonly media = new Map<string, { data: Buffer; contentType: string }>();
  private readonly failures: { count: number; failure: InjectedFailure }[] = [];
  private readonly routes: Route[] = [];
  private closed = false;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly serverName: string,
  ) {
    this.rooms = new StandinRooms(serverName);
    this.defineRoutes();
    server.on("request", (req, res) => void this.handle(req, res));
  }

  /** Starts a stand-in on a free loopback port. */
  static async start(serverName = "standin.test"): Promise<MatrixHomeserverStandin> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return new MatrixHomeserverStandin(server, `http://127.0.0.1:${port}`, serverName);
  }

  /** Registers a user and returns its id and access token. */
  registerUser(localpart: string): { userId: string; accessToken: string } {
    const userId = `@${localpart}:${this.serverName}`;
    const accessToken = `tok_${localpart}_${randomBytes(12).toString("hex")}`;
    this.tokens.set(accessToken, userId);
    return { userId, accessToken };
  }

  /** Creates a room owned by `creator` with `members` already joined. */
  createRoom(
    creator: string,
    options: {
      name?: string;
      members?: string[];
      powerLevels?: Record<string, number>;
      encrypted?: boolean;
    } = {},
  ): string {
    const roomId = this.rooms.create(creator, options);
    for (const member of options.members ?? []) this.joinAs(roomId, member);
    if (options.encrypted) this.encrypt(roomId, creator);
    return roomId;
  }

  /** `inviter` invites `invitee` into the room. */
  invite(roomId: string, inviter: string, invitee: string): StandinEvent {
    return this.rooms.append(roomId, inviter, "m.room.member", { membership: "invite" }, invitee);
  }

  /** Joins a user to the room directly. */
  joinAs(roomId: string, userId: string): StandinEvent {
    return this.rooms.append(roomId, userId, "m.room.member", { membership: "join" }, userId);
  }

  /** Sends any event as a user. */
  send(roomId: string, sender: string, type: string, content: Record<string, unknown>): StandinEvent {
    return this.rooms.append(roomId, sender, type, content);
  }

  /**
   * Sends a text message as a user; a reply carries the fallback quote real clients
   * put in the body, and a thread message its m.thread relation.
   */
  sendText(
    roomId: string,
    sender: string,
    text: string,
    options: { replyTo?: string; threadRoot?: string; msgtype?: string } = {},
  ): StandinEvent {
    const content: Record<string, unknown> = { msgtype: options.msgtype ?? "m.text", body: text };
    const replied = options.replyTo ? this.rooms.event(roomId, options.replyTo) : undefined;
    if (replied) {
      const quoted = String(replied.content.body ?? "")
        .split("\n")
        .join("\n> ");
      content.body = `> <${replied.sender}> ${quoted}\n\n${text}`;
    }
    if (options.threadRoot) {
      content["m.relates_to"] = {
        rel_type: "m.thread",
        event_id: options.threadRoot,
        is_falling_back: !options.replyTo,
        "m.in_reply_to": { event_id: options.replyTo ?? options.threadRoot },
      };
    } else if (options.replyTo) {
      content["m.relates_to"] = { "m.in_reply_to": { event_id: options.replyTo } };
    }
    return this.send(roomId, sender, "m.room.message", content);
  }

  /** Reacts to an event with an annotation key. */
  react(roomId: string, sender: string, target: string, key: string): StandinEvent {
    return this.send(roomId, sender, "m.reaction", {
      "m.relates_to": { rel_type: "m.annotation", event_id: target, key },
    });
  }

  /** Uploads `data` and sends it as an m.file message; `size` overrides the declared size. */
  sendFile(
    roomId: string,
    sender: string,
    file: { name: string; mime: string; data: string | Buffer; size?: number },
  ): StandinEvent {
    const data = Buffer.from(file.data);
    const url = this.upload(data, file.mime);
    return this.send(roomId, sender, "m.room.message", {
      msgtype: "m.file",
      body: file.name,
      filename: file.name,
      url,
      info: { mimetype: file.mime, size: file.size ?? data.length },
    });
  }

  /** Stores media and returns its mxc URI. */
  upload(data: Buffer, contentType: string): string {
    const id = randomBytes(8).toString("hex");
    this.media.set(id, { data, contentType });
    return `mxc://${this.serverName}/${id}`;
  }

  /** Sets a state event as a user. */
  setState(
    roomId: string,
    sender: string,
    type: string,
    key: string,
    content: Record<string, unknown>,
  ): StandinEvent {
    return this.rooms.append(roomId, sender, type, content, key);
  }

  /** Turns on end-to-end encryption in the room (the state event only). */
  encrypt(roomId: string, sender: string): StandinEvent {
    return this.setState(roomId, sender, "m.room.encryption", "", { algorithm: "m.megolm.v1.aes-sha2" });
  }

  /** A user's membership in a room, if any. */
  membership(roomId: string, userId: string): string | undefined {
    return this.rooms.membership(roomId, userId)?.membership;
  }

  /** Events a user sent in a room, optionally of one type. */
  sentBy(roomId: string, userId: string, type?: string): StandinEvent[] {
    return this.rooms.events(roomId).filter((e) => e.sender === userId && (!type || e.type === type));
  }

  /** Resolves with the first event of the room that matches, waiting for it up to `timeoutMs`. */
  async waitForEvent(
    roomId: string,
    match: (event: StandinEvent) => boolean,
    timeoutMs = 10_000,
  ): Promise<StandinEvent> {
    const found = this.rooms.events(roomId).find(match);
    if (found) return found;
    return new Promise((resolve, reject) => {
      const onEvent = (event: StandinEvent): void => {
        if (event.room_id !== roomId || !match(event)) return;
        clearTimeout(timer);
        this.rooms.changed.off("event", onEvent);
        resolve(event);
      };
      const timer = setTimeout(() => {
        this.rooms.changed.off("event", onEvent);
        reject(new Error(`stand-in: no matching event in ${roomId} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.rooms.changed.on("event", onEvent);
    });
  }

  /** Fails the next `count` requests whose path matches with the given status and error. */
  failNext(count: number, failure: InjectedFailure): void {
    this.failures.push({ count, failure });
  }

  /** Stops the server, ending long-polls and open connections. */
  async close(): Promise<void> {
    this.closed = true;
    this.rooms.changed.emit("close");
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    const method = req.method ?? "GET";
    let status = 500;
    let userId: string | undefined;
    try {
      const body = await readBody(req);
      const injected = this.takeFailure(url.pathname);
      if (injected) {
        throw new HttpError(injected.status, injected.errcode ?? "M_UNKNOWN", "injected failure", {
          ...(injected.retryAfterMs === undefined ? {} : { retry_after_ms: injected.retryAfterMs }),
        });
      }
      const { route, params } = this.match(method, url.pathname);
      const token =
        /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ??
        url.searchParams.get("access_token") ??
        "";
      userId = this.tokens.get(token);
      if (!userId && !url.pathname.endsWith("/versions")) {
        throw new HttpError(401, "M_UNKNOWN_TOKEN", "unknown access token");
      }
      const json = parseJson(body);
      const reply = await route.handler({
        method,
        params,
        query: url.searchParams,
        body,
        json,
        userId: userId ?? "",
        token,
        req,
      });
      status = reply.status ?? 200;
      if (reply.raw) {
        res.writeHead(status, { "Content-Type": reply.raw.contentType });
        res.end(reply.raw.data);
      } else {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(reply.json ?? {}));
      }
    } catch (err) {
      const e = err instanceof HttpError ? err : new HttpError(500, "M_UNKNOWN", String(err));
      status = e.status;
      if (!res.headersSent) res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ errcode: e.errcode, error: e.message, ...e.extra }));
    } finally {
      this.requests.push({ method, path: url.pathname, status, ...(userId ? { userId } : {}) });
    }
  }

  private takeFailure(path: string): InjectedFailure | undefined {
    const entry = this.failures.find((f) => f.count > 0 && (f.failure.path ?? /\/send\//).test(path));
    if (!entry) return undefined;
    entry.count -= 1;
    return entry.failure;
  }

  private route(method: string, pattern: string, handler: Handler): void {
    this.routes.push({ method, parts: pattern.split("/"), handler });
  }

  private match(method: string, pathname: string): { route: Route; params: string[] } {
    const parts = pathname.split("/");
    for (const route of this.routes) {
      if (route.method !== method || route.parts.length !== parts.length) continue;
      const params: string[] = [];
      const ok = route.parts.every((p, i) => {
        const actual = parts[i] ?? "";
        if (p.startsWith(":")) params.push(decodeURIComponent(actual));
        return p.startsWith(":") || p === actual;
      });
      if (ok) return { route, params };
    }
    throw new HttpError(404, "M_UNRECOGNIZED", `stand-in: no endpoint ${method} ${pathname}`);
  }

  private joined(roomId: string, userId: string): void {
    if (!this.rooms.has(roomId)) throw new HttpError(404, "M_NOT_FOUND", "no such room");
    if (this.membership(roomId, userId) !== "join") throw new HttpError(403, "M_FORBIDDEN", "not in room");
  }

  private defineRoutes(): void {
    this.route("GET", "/_matrix/client/versions", () => ({
      json: { versions: ["v1.1", "v1.5", "v1.11"], unstable_features: {} },
    }));
    this.route("GET", `${C}/account/whoami`, (c) => ({ json: { user_id: c.userId, device_id: "STANDIN" } }));
    this.route("GET", `${C}/joined_rooms`, (c) => ({
      json: { joined_rooms: this.rooms.roomsWith(c.userId, "join") },
    }));
    this.route("GET", `${C}/sync`, (c) => this.sync(c));
    this.route("POST", `${C}/user/:user/filter`, (c) => {
      const id = String(this.filters.size + 1);
      this.filters.set(`${c.userId}/${id}`, c.json);
      return { json: { filter_id: id } };
    });
    this.route("GET", `${C}/user/:user/filter/:id`, (c) => {
      const filter = this.filters.get(`${c.userId}/${c.params[1]}`);
      if (!filter) throw new HttpError(404, "M_NOT_FOUND", "no such filter");
      return { json: filter };
    });
    const join = (c: Call): Reply => {
      const roomId = c.params[0] ?? "";
      if (!this.rooms.has(roomId)) throw new HttpError(404, "M_NOT_FOUND", "no such room");
      const membership = this.membership(roomId, c.userId);
      const rule = this.rooms.stateEvent(roomId, "m.room.join_rules", "")?.content.join_rule;
      if (membership !== "invite" && membership !== "join" && rule !== "public") {
        throw new HttpError(403, "M_FORBIDDEN", "you are not invited to this room");
      }
      if (membership !== "join") this.joinAs(roomId, c.userId);
      return { json: { room_id: roomId } };
    };
    this.route("POST", `${C}/join/:room`, join);
    this.route("POST", `${C}/rooms/:room/join`, join);
    this.route("POST", `${C}/rooms/:room/leave`, (c) => {
      const roomId = c.params[0] ?? "";
      if (this.membership(roomId, c.userId)) {
        this.rooms.append(roomId, c.userId, "m.room.member", { membership: "leave" }, c.userId);
      }
      return { json: {} };
    });
    this.route("POST", `${C}/rooms/:room/invite`, (c) => {
      const roomId = c.params[0] ?? "";
      this.joined(roomId, c.userId);
      return { json: { event_id: this.invite(roomId, c.userId, String(c.json.user_id)).event_id } };
    });
    this.route("PUT", `${C}/rooms/:room/send/:type/:txn`, (c) => this.sendEvent(c));
    this.route("PUT", `${C}/rooms/:room/redact/:event/:txn`, (c) => {
      const [roomId = "", redacts = ""] = c.params;
      this.joined(roomId, c.userId);
      const event = this.rooms.append(roomId, c.userId, "m.room.redaction", { ...c.json, redacts });
      return { json: { event_id: event.event_id } };
    });
    this.route("PUT", `${C}/rooms/:room/typing/:user`, (c) => {
      this.typing.push({ roomId: c.params[0] ?? "", userId: c.userId, typing: c.json.typing === true });
      return { json: {} };
    });
    this.route("GET", `${C}/rooms/:room/state`, (c) => {
      const roomId = c.params[0] ?? "";
      this.joined(roomId, c.userId);
      return { json: this.rooms.state(roomId).map((e) => clientEvent(e, true)) };
    });
    const getState = (c: Call): Reply => {
      const [roomId = "", type = "", key = ""] = c.params;
      this.joined(roomId, c.userId);
      const event = this.rooms.stateEvent(roomId, type, key);
      if (!event) throw new HttpError(404, "M_NOT_FOUND", "no such state");
      return { json: event.content };
    };
    const putState = (c: Call): Reply => {
      const [roomId = "", type = "", key = ""] = c.params;
      this.joined(roomId, c.userId);
      return { json: { event_id: this.setState(roomId, c.userId, type, key, c.json).event_id } };
    };
    this.route("GET", `${C}/rooms/:room/state/:type/:key`, getState);
    this.route("GET", `${C}/rooms/:room/state/:type`, getState);
    this.route("PUT", `${C}/rooms/:room/state/:type/:key`, putState);
    this.route("PUT", `${C}/rooms/:room/state/:type`, putState);
    this.route("GET", `${C}/rooms/:room/event/:event`, (c) => {
      const [roomId = "", eventId = ""] = c.params;
      this.joined(roomId, c.userId);
      const event = this.rooms.event(roomId, eventId);
      if (!event) throw new HttpError(404, "M_NOT_FOUND", "no such event");
      return { json: clientEvent(event, true) };
    });
    const relations = (c: Call): Reply => {
      const [roomId = "", eventId = "", relType, eventType] = c.params;
      this.joined(roomId, c.userId);
      const chunk = this.rooms.events(roomId).filter((e) => {
        const rel = e.content["m.relates_to"] as { event_id?: string; rel_type?: string } | undefined;
        return (
          rel?.event_id === eventId &&
          (!relType || rel.rel_type === relType) &&
          (!eventType || e.type === eventType)
        );
      });
      return { json: { chunk: chunk.map((e) => clientEvent(e, true)) } };
    };
    this.route("GET", "/_matrix/client/v1/rooms/:room/relations/:event", relations);
    this.route("GET", "/_matrix/client/v1/rooms/:room/relations/:event/:rel", relations);
    this.route("GET", "/_matrix/client/v1/rooms/:room/relations/:event/:rel/:type", relations);
    const accountKey = (c: Call): string => `${c.userId}/${c.params.join("/")}`;
    for (const path of [
      `${C}/user/:user/account_data/:type`,
      `${C}/user/:user/rooms/:room/account_data/:type`,
    ]) {
      this.route("GET", path, (c) => {
        if (c.params[0] !== c.userId) throw new HttpError(403, "M_FORBIDDEN", "not your account data");
        const data = this.accountData.get(accountKey(c));
        if (data === undefined) throw new HttpError(404, "M_NOT_FOUND", "no account data");
        return { json: data };
      });
      this.route("PUT", path, (c) => {
        if (c.params[0] !== c.userId) throw new HttpError(403, "M_FORBIDDEN", "not your account data");
        this.accountData.set(accountKey(c), c.json);
        return { json: {} };
      });
    }
    const download = (c: Call): Reply => {
      const [server, id = ""] = c.params;
      const item = server === this.serverName ? this.media.get(id) : undefined;
      if (!item) throw new HttpError(404, "M_NOT_FOUND", "no such media");
      return { raw: item };
    };
    this.route("GET", "/_matrix/client/v1/media/download/:server/:id", download);
    this.route("GET", "/_matrix/media/v3/download/:server/:id", download);
    this.route("POST", "/_matrix/media/v3/upload", (c) => ({
      json: { content_uri: this.upload(c.body, c.req.headers["content-type"] ?? "application/octet-stream") },
    }));
  }

  private sendEvent(c: Call): Reply {
    const [roomId = "", type = "", txn = ""] = c.params;
    const txnKey = `${c.token}\u0000${txn}`;
    const previous = this.txns.get(txnKey);
    if (previous) return { json: { event_id: previous } };
    this.joined(roomId, c.userId);
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
    const event = this.rooms.append(roomId, c.userId, type, c.json);
    this.txns.set(txnKey, event.event_id);
    return { json: { event_id: event.event_id } };
  }

  private async sync(c: Call): Promise<Reply> {
    const sinceParam = c.query.get("since");
    const since = sinceParam ? Number(sinceParam.replace(/^s/, "")) : null;
    const limit = this.timelineLimit(c);
    const timeout = Number(c.query.get("timeout") ?? 0);
    let body = this.syncBody(c.userId, since, limit);
    if (since !== null && body.empty && timeout > 0 && !this.closed) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.rooms.changed.off("event", done);
          this.rooms.changed.off("close", done);
          resolve();
        };
        const timer = setTimeout(done, timeout);
        this.rooms.changed.on("event", done);
        this.rooms.changed.on("close", done);
      });
      body = this.syncBody(c.userId, since, limit);
    }
    return { json: body.json };
  }

  private timelineLimit(c: Call): number {
    const param = c.query.get("filter");
    let filter: unknown = undefined;
    if (param?.startsWith("{")) filter = parseJson(Buffer.from(param));
    else if (param) filter = this.filters.get(`${c.userId}/${param}`);
    const limit = (filter as { room?: { timeline?: { limit?: unknown } } } | undefined)?.room?.timeline
      ?.limit;
    return typeof limit === "number" ? limit : 20;
  }

  private syncBody(userId: string, since: number | null, limit: number): { empty: boolean; json: unknown } {
    const next = this.rooms.position;
    const join: Record<string, unknown> = {};
    const invite: Record<string, unknown> = {};
    const leave: Record<string, unknown> = {};
    for (const roomId of this.rooms.roomsWith(userId, "join")) {
      const joinedAt = this.rooms.membership(roomId, userId)?.event.pos ?? 0;
      // Like Synapse, a newly joined room arrives with recent history and its state.
      const fresh = since === null || joinedAt > since;
      const events = fresh ? this.rooms.events(roomId) : this.rooms.eventsSince(roomId, since);
      if (events.length === 0) continue;
      const timeline = events.slice(-limit);
      join[roomId] = {
        timeline: { events: timeline.map((e) => clientEvent(e)), limited: timeline.length < events.length },
        state: { events: fresh ? this.rooms.state(roomId).map((e) => clientEvent(e)) : [] },
        ephemeral: { events: [] },
        account_data: { events: [] },
      };
    }
    for (const roomId of this.rooms.roomsWith(userId, "invite")) {
      const member = this.rooms.membership(roomId, userId)?.event;
      if (!member || (since !== null && member.pos <= since)) continue;
      const stripped = [this.rooms.stateEvent(roomId, "m.room.join_rules", ""), member]
        .filter((e): e is StandinEvent => e !== undefined)
        .map((e) => ({ type: e.type, state_key: e.state_key, sender: e.sender, content: e.content }));
      invite[roomId] = { invite_state: { events: stripped } };
    }
    for (const roomId of [...this.rooms.roomsWith(userId, "leave"), ...this.rooms.roomsWith(userId, "ban")]) {
      const member = this.rooms.membership(roomId, userId)?.event;
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
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {};
  try {
    const value: unknown = JSON.parse(body.toString("utf8"));
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
