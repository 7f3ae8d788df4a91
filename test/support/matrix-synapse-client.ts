import { createHmac, randomBytes } from "node:crypto";

/** One event as a real homeserver's `/messages` returns it. */
export interface SynapseEvent {
  event_id: string;
  type: string;
  sender: string;
  content: Record<string, unknown>;
  state_key?: string;
}

/** A person (or the bot) on a real homeserver, acting through the client-server API. */
export class SynapseUser {
  private txn = 0;

  constructor(
    readonly homeserver: string,
    readonly userId: string,
    readonly accessToken: string,
    /** The account's password, for a client that logs in as a device of its own. */
    readonly password = "",
  ) {}

  /** One authenticated client-server request; throws with the homeserver's error text. */
  async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
  ): Promise<unknown> {
    const response = await fetch(this.homeserver + path, {
      method,
      headers: { Authorization: `Bearer ${this.accessToken}`, "Content-Type": contentType },
      ...(body === undefined
        ? {}
        : { body: typeof body === "string" || body instanceof Buffer ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
    return text === "" ? {} : (JSON.parse(text) as unknown);
  }

  /** Creates a private, unencrypted room and returns its id. */
  async createRoom(name: string): Promise<string> {
    const created = (await this.request("POST", "/_matrix/client/v3/createRoom", {
      preset: "private_chat",
      name,
    })) as { room_id: string };
    return created.room_id;
  }

  /** Invites a user into a room. */
  async invite(roomId: string, userId: string): Promise<void> {
    await this.request("POST", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/invite`, {
      user_id: userId,
    });
  }

  /** Joins a room. */
  async join(roomId: string): Promise<void> {
    await this.request("POST", `/_matrix/client/v3/join/${encodeURIComponent(roomId)}`, {});
  }

  /** Sends a message-like event and returns its id. */
  async send(roomId: string, type: string, content: Record<string, unknown>): Promise<string> {
    const txn = `e2e-${Date.now()}-${++this.txn}`;
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/${type}/${txn}`;
    return ((await this.request("PUT", path, content)) as { event_id: string }).event_id;
  }

  /** Sends text; a reply carries an `m.in_reply_to` relation. */
  async say(roomId: string, body: string, replyTo?: string): Promise<string> {
    return this.send(roomId, "m.room.message", {
      msgtype: "m.text",
      body,
      ...(replyTo ? { "m.relates_to": { "m.in_reply_to": { event_id: replyTo } } } : {}),
    });
  }

  /** Reacts to an event. */
  async react(roomId: string, eventId: string, key: string): Promise<string> {
    return this.send(roomId, "m.reaction", {
      "m.relates_to": { rel_type: "m.annotation", event_id: eventId, key },
    });
  }

  /** Uploads a text file and sends it as m.file. */
  async sendFile(roomId: string, name: string, mime: string, text: string): Promise<string> {
    const uploaded = (await this.request(
      "POST",
      `/_matrix/media/v3/upload?filename=${encodeURIComponent(name)}`,
      Buffer.from(text),
      mime,
    )) as { content_uri: string };
    return this.send(roomId, "m.room.message", {
      msgtype: "m.file",
      body: name,
      filename: name,
      url: uploaded.content_uri,
      info: { mimetype: mime, size: Buffer.byteLength(text) },
    });
  }

  /** A user's membership in a room, as the room's state says. */
  async membership(roomId: string, userId: string): Promise<string | undefined> {
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/state/m.room.member/${encodeURIComponent(userId)}`;
    try {
      return ((await this.request("GET", path)) as { membership?: string }).membership;
    } catch {
      return undefined;
    }
  }

  /** The room's latest events, oldest first. */
  async messages(roomId: string, limit = 200): Promise<SynapseEvent[]> {
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=${limit}`;
    const page = (await this.request("GET", path)) as { chunk: SynapseEvent[] };
    return page.chunk.reverse();
  }

  /** Polls the room until an event matches, or fails after `timeoutMs`. */
  async waitFor(
    roomId: string,
    match: (e: SynapseEvent) => boolean,
    timeoutMs = 30_000,
  ): Promise<SynapseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = (await this.messages(roomId)).find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching event in ${roomId} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Registers a user through Synapse's shared-secret admin API (what
 * `register_new_matrix_user` does), with a random suffix so runs never collide.
 */
export async function registerWithSharedSecret(
  homeserver: string,
  sharedSecret: string,
  localpart: string,
  options: { admin?: boolean } = {},
): Promise<SynapseUser> {
  const endpoint = `${homeserver}/_synapse/admin/v1/register`;
  const { nonce } = (await (await fetch(endpoint)).json()) as { nonce: string };
  const username = `${localpart}-${randomBytes(4).toString("hex")}`;
  const password = randomBytes(18).toString("base64url");
  const mac = createHmac("sha1", sharedSecret)
    .update(`${nonce}\u0000${username}\u0000${password}\u0000${options.admin ? "admin" : "notadmin"}`)
    .digest("hex");
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ nonce, username, password, admin: options.admin === true, mac }),
  });
  const body = (await response.json()) as { user_id?: string; access_token?: string; error?: string };
  if (!response.ok || !body.user_id || !body.access_token) {
    throw new Error(`registering ${username} failed: HTTP ${response.status} ${body.error ?? ""}`);
  }
  return new SynapseUser(homeserver, body.user_id, body.access_token, password);
}
