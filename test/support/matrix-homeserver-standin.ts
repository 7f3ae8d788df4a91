import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { answer, type InjectedFailure, type StandinRequest } from "./matrix-standin-http.js";
import { StandinKeys } from "./matrix-standin-keys.js";
import { standinRoutes } from "./matrix-standin-routes.js";
import { StandinRooms, type StandinEvent } from "./matrix-standin-rooms.js";

export type { InjectedFailure, StandinRequest } from "./matrix-standin-http.js";
export { MAX_EVENT_BYTES } from "./matrix-standin-routes.js";
export type { StandinEvent } from "./matrix-standin-rooms.js";

/**
 * A Matrix homeserver stand-in for tests: a real HTTP server on loopback that speaks
 * the client-server endpoints matrix-bot-sdk uses (long-poll sync with invites,
 * idempotent sends per access token and transaction id, state, typing, account
 * data, media, relations), enforces the event size limit, can fail the next
 * requests with 429 or 5xx, and lets tests act as people and read what the bot sent.
 */
export class MatrixHomeserverStandin {
  readonly rooms: StandinRooms;
  /** Device keys, one-time keys and to-device messages (end-to-end encryption). */
  readonly keys: StandinKeys;
  readonly requests: StandinRequest[] = [];
  readonly typing: { roomId: string; userId: string; typing: boolean }[] = [];
  private readonly tokens = new Map<string, string>();
  private readonly devices = new Map<string, string>();
  private readonly passwords = new Map<string, string>();
  private readonly media = new Map<string, { data: Buffer; contentType: string }>();
  private readonly failures: { count: number; failure: InjectedFailure }[] = [];
  private closed = false;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly serverName: string,
  ) {
    this.rooms = new StandinRooms(serverName);
    this.keys = new StandinKeys({
      tick: () => this.rooms.tick(),
      deviceOf: (token) => this.deviceOf(token),
      passwordOf: (userId) => this.passwords.get(userId),
      roomPeers: (userId) =>
        new Set([
          userId,
          ...this.rooms
            .roomsWith(userId, "join")
            .flatMap((roomId) =>
              this.rooms
                .state(roomId)
                .flatMap((e) => (e.type === "m.room.member" && e.state_key ? [e.state_key] : [])),
            ),
        ]),
    });
    const answering = {
      baseUrl: url,
      router: standinRoutes(this, this.media, () => this.closed),
      requests: this.requests,
      userFor: (token: string) => this.tokens.get(token),
      takeFailure: (path: string) => this.takeFailure(path),
    };
    server.on("request", (req, res) => void answer(req, res, answering));
  }

  /** Starts a stand-in on a free loopback port. */
  static async start(serverName = "standin.test"): Promise<MatrixHomeserverStandin> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return new MatrixHomeserverStandin(server, `http://127.0.0.1:${port}`, serverName);
  }

  /**
   * Registers a user and returns its id, password and access token (a login: one
   * device, `STANDIN` unless named).
   */
  registerUser(
    localpart: string,
    deviceId = "STANDIN",
  ): { userId: string; accessToken: string; deviceId: string; password: string } {
    const userId = `@${localpart}:${this.serverName}`;
    const password = `pw-${localpart}-${randomBytes(6).toString("hex")}`;
    this.passwords.set(userId, password);
    return { ...this.login(userId, deviceId), userId, password };
  }

  /** Logs an existing user in again: a new access token for the device (a new device when the id is new). */
  login(userId: string, deviceId: string): { accessToken: string; deviceId: string } {
    const localpart = userId.slice(1).split(":")[0] ?? "user";
    const accessToken = `tok_${localpart}_${randomBytes(12).toString("hex")}`;
    this.tokens.set(accessToken, userId);
    this.devices.set(accessToken, deviceId);
    return { accessToken, deviceId };
  }

  /** The device id of an access token. */
  deviceOf(token: string): string {
    return this.devices.get(token) ?? "STANDIN";
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

  /** Uploaded media by mxc URI, as stored. */
  mediaAt(mxc: string): { data: Buffer; contentType: string } | undefined {
    return this.media.get(mxc.split("/").at(-1) ?? "");
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

  private takeFailure(path: string): InjectedFailure | undefined {
    const entry = this.failures.find((f) => f.count > 0 && (f.failure.path ?? /\/send\//).test(path));
    if (!entry) return undefined;
    entry.count -= 1;
    return entry.failure;
  }
}
