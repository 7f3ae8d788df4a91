import {
  Attachment,
  CollectStrategy,
  DecryptionSettings,
  EncryptedAttachment,
  DeviceId,
  DeviceLists,
  EncryptionSettings,
  initAsync,
  KeysClaimRequest,
  KeysQueryRequest,
  KeysUploadRequest,
  RoomMessageRequest,
  OlmMachine,
  RoomId,
  ShieldColor,
  ShieldStateCode,
  SignatureUploadRequest,
  ToDeviceRequest,
  TrustRequirement,
  UserId,
} from "@matrix-org/matrix-sdk-crypto-wasm";
import type { MatrixHomeserverStandin, StandinEvent } from "./matrix-homeserver-standin.js";

type Request = Awaited<ReturnType<OlmMachine["outgoingRequests"]>>[number];

/** Each test user's private cross-signing keys, by stand-in and user: a second device of the user adopts them. */
const identities = new Map<string, { master: string; selfSigning: string; userSigning: string }>();

/** How a peer logs in: cross-signing set up (as Element does for a new account), and strict like Element excluding insecure devices. */
export interface PeerOptions {
  /** Bootstrap cross-signing and sign this device (default true); false is a legacy client. */
  crossSign?: boolean;
  /** Share keys only with cross-signed devices and read only theirs (Element's OnlySignedDevices mode). */
  strict?: boolean;
}

/**
 * A person's encrypting Matrix client for tests, on the stand-in: its own crypto
 * machine (in memory), its own sync, and sends of `m.room.encrypted` events shared
 * with the room's joined members, the way a normal client (Element) does it: with a
 * cross-signing identity of its own unless told not to, and optionally strict.
 */
export class E2eePeer {
  private since: string | undefined;
  private txn = 0;

  private constructor(
    private readonly hs: MatrixHomeserverStandin,
    readonly userId: string,
    readonly deviceId: string,
    readonly accessToken: string,
    readonly machine: OlmMachine,
    private readonly strict: boolean,
  ) {}

  /** Logs `userId` in as `deviceId`, uploads the new device's keys and (by default) sets up cross-signing. */
  static async login(
    hs: MatrixHomeserverStandin,
    userId: string,
    deviceId: string,
    options: PeerOptions = {},
  ): Promise<E2eePeer> {
    await initAsync();
    const { accessToken } = hs.login(userId, deviceId);
    const machine = await OlmMachine.initialize(new UserId(userId), new DeviceId(deviceId));
    const peer = new E2eePeer(hs, userId, deviceId, accessToken, machine, options.strict ?? false);
    await peer.flush();
    if (options.crossSign ?? true) {
      const known = identities.get(`${hs.url}|${userId}`);
      if (known && hs.keys.signing.keysOf(userId)) await peer.adoptIdentity(known);
      else await peer.bootstrapCrossSigning();
    }
    return peer;
  }

  /** Takes the user's private cross-signing keys (as a second device does after verifying) and signs this device. */
  private async adoptIdentity(keys: {
    master: string;
    selfSigning: string;
    userSigning: string;
  }): Promise<void> {
    await this.learn(this.userId);
    await this.machine.importCrossSigningKeys(keys.master, keys.selfSigning, keys.userSigning);
    const device = await this.machine.getDevice(new UserId(this.userId), new DeviceId(this.deviceId));
    if (device) await this.sendRequest(await device.verify());
  }

  /**
   * Makes a new cross-signing identity and signs this device with it: a first upload
   * with the token alone, a reset (`password`) through user-interactive auth.
   */
  async bootstrapCrossSigning(password?: string): Promise<void> {
    const requests = await this.machine.bootstrapCrossSigning(true);
    const upload: unknown = requests.uploadKeysRequest;
    if (upload instanceof KeysUploadRequest) await this.sendRequest(upload);
    const body = JSON.parse(requests.uploadSigningKeysRequest.body) as Record<string, unknown>;
    const path = "/_matrix/client/v3/keys/device_signing/upload";
    if (password === undefined) await this.call("POST", path, body);
    else {
      const challenge = await fetch(`${this.hs.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.accessToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const { session } = (await challenge.json()) as { session: string };
      const identifier = { type: "m.id.user", user: this.userId };
      await this.call("POST", path, {
        ...body,
        auth: { type: "m.login.password", identifier, password, session },
      });
    }
    await this.sendRequest(requests.uploadSignaturesRequest);
    const exported = await this.machine.exportCrossSigningKeys();
    if (exported?.masterKey && exported.self_signing_key && exported.userSigningKey) {
      identities.set(`${this.hs.url}|${this.userId}`, {
        master: exported.masterKey,
        selfSigning: exported.self_signing_key,
        userSigning: exported.userSigningKey,
      });
    }
  }

  /** Pins (or re-pins) another user's current identity after learning it anew. */
  async learn(userId: string): Promise<void> {
    await this.sendRequest(this.machine.queryKeysForUsers([new UserId(userId)]));
  }

  /** One sync without waiting: to-device messages and device-list changes go to the machine. */
  async sync(): Promise<void> {
    const query = new URLSearchParams({ timeout: "0", ...(this.since ? { since: this.since } : {}) });
    const body = (await this.call("GET", `/_matrix/client/v3/sync?${query}`)) as {
      next_batch: string;
      to_device?: { events: unknown[] };
      device_lists?: { changed?: string[]; left?: string[] };
      device_one_time_keys_count?: Record<string, number>;
    };
    this.since = body.next_batch;
    await this.machine.receiveSyncChanges(
      JSON.stringify(body.to_device?.events ?? []),
      new DeviceLists(
        (body.device_lists?.changed ?? []).map((u) => new UserId(u)),
        (body.device_lists?.left ?? []).map((u) => new UserId(u)),
      ),
      new Map(Object.entries(body.device_one_time_keys_count ?? {})),
      new Set(),
    );
    await this.flush();
  }

  /** Sends an encrypted event into the room, sharing the room key with its joined members' devices first. */
  async send(roomId: string, type: string, content: Record<string, unknown>): Promise<StandinEvent> {
    await this.sync();
    const members = this.hs.rooms
      .state(roomId)
      .filter((e) => e.type === "m.room.member" && e.content.membership === "join")
      .map((e) => e.state_key ?? "");
    const users = (): UserId[] => members.map((m) => new UserId(m));
    await this.machine.updateTrackedUsers(users());
    await this.flush();
    const claim = await this.machine.getMissingSessions(users());
    if (claim) await this.sendRequest(claim);
    const settings = new EncryptionSettings();
    if (this.strict) settings.sharingStrategy = CollectStrategy.identityBasedStrategy();
    for (const share of await this.machine.shareRoomKey(new RoomId(roomId), users(), settings)) {
      await this.sendRequest(share);
    }
    const encrypted = JSON.parse(
      await this.machine.encryptRoomEvent(new RoomId(roomId), type, JSON.stringify(content)),
    ) as Record<string, unknown>;
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.encrypted/p${this.txn++}`;
    const { event_id } = (await this.call("PUT", path, encrypted)) as { event_id: string };
    const event = this.hs.rooms.event(roomId, event_id);
    if (!event) throw new Error("peer: sent event not found");
    return event;
  }

  /** Sends an event in the clear (Element's in-room verification request, even in an encrypted room). */
  async sendClear(roomId: string, type: string, content: Record<string, unknown>): Promise<StandinEvent> {
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/${type}/p${this.txn++}`;
    const { event_id } = (await this.call("PUT", path, content)) as { event_id: string };
    const event = this.hs.rooms.event(roomId, event_id);
    if (!event) throw new Error("peer: sent event not found");
    return event;
  }

  /** Sends an encrypted text message. */
  sendText(roomId: string, text: string): Promise<StandinEvent> {
    return this.send(roomId, "m.room.message", { msgtype: "m.text", body: text });
  }

  /** Uploads a text file encrypted (the spec's attachment encryption) and sends it as an encrypted m.file. */
  async sendFile(roomId: string, name: string, mime: string, text: string): Promise<StandinEvent> {
    const plain = Buffer.from(text);
    const encrypted = Attachment.encrypt(plain);
    const info = JSON.parse(encrypted.mediaEncryptionInfo ?? "{}") as Record<string, unknown>;
    const url = this.hs.upload(Buffer.from(encrypted.encryptedData), "application/octet-stream");
    return this.send(roomId, "m.room.message", {
      msgtype: "m.file",
      body: name,
      filename: name,
      info: { mimetype: mime, size: plain.length },
      file: { ...info, url },
    });
  }

  /** Downloads and decrypts a file the bot sent encrypted (its `file` object). */
  downloadFile(file: Record<string, unknown>): Buffer {
    const media = this.hs.mediaAt(String(file.url));
    if (!media) throw new Error("peer: no such media");
    return Buffer.from(Attachment.decrypt(new EncryptedAttachment(media.data, JSON.stringify(file))));
  }

  /** Starts a new outbound Megolm session for the room (as a client does when it rotates). */
  async rotate(roomId: string): Promise<void> {
    await this.machine.invalidateGroupSession(new RoomId(roomId));
  }

  /** Decrypts one event of the room; null when this device cannot. */
  async decrypt(event: StandinEvent): Promise<{ type: string; content: Record<string, unknown> } | null> {
    await this.sync();
    try {
      const { pos: _pos, ...wire } = event;
      const decrypted = await this.machine.decryptRoomEvent(
        JSON.stringify(wire),
        new RoomId(event.room_id),
        new DecryptionSettings(
          this.strict ? TrustRequirement.CrossSignedOrLegacy : TrustRequirement.Untrusted,
        ),
      );
      return JSON.parse(decrypted.event) as { type: string; content: Record<string, unknown> };
    } catch {
      return null;
    }
  }

  /** Every event one user sent in the room, decrypted where this device can (null where not). */
  async readFrom(
    roomId: string,
    sender: string,
  ): Promise<({ type: string; content: Record<string, unknown> } | null)[]> {
    await this.sync();
    const out = [];
    for (const event of this.hs.rooms.events(roomId)) {
      if (event.sender !== sender || event.state_key !== undefined) continue;
      out.push(
        event.type === "m.room.encrypted"
          ? await this.decrypt(event)
          : { type: event.type, content: event.content },
      );
    }
    return out;
  }

  /** Sends what the machine has queued (key upload, queries, claims, to-device messages). */
  async flush(): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const requests = await this.machine.outgoingRequests();
      if (requests.length === 0) return;
      for (const request of requests) await this.sendRequest(request);
    }
  }

  /** How this client shows an event's sender: whether the sending device is cross-signed by its owner (no red shield). */
  async senderTrust(event: StandinEvent): Promise<{ crossSigned: boolean; shield: string; code: string }> {
    await this.sync();
    const { pos: _pos, ...wire } = event;
    const info = await this.machine.getRoomEventEncryptionInfo(
      JSON.stringify(wire),
      new RoomId(event.room_id),
    );
    const shield = info.shieldState(false);
    const deviceId = info.senderDevice?.toString() ?? "";
    const device = await this.machine.getDevice(new UserId(event.sender), new DeviceId(deviceId));
    return {
      crossSigned: device?.isCrossSignedByOwner() ?? false,
      shield: ShieldColor[shield.color],
      code: shield.code === undefined ? "none" : ShieldStateCode[shield.code],
    };
  }

  /** Sends one request the machine made (a verification step, say) and reports the answer to it. */
  async sendOutgoing(
    request: ToDeviceRequest | SignatureUploadRequest | RoomMessageRequest | KeysClaimRequest,
  ): Promise<void> {
    await this.sendRequest(request);
  }

  /** Syncs until `done()` holds (a verification step arrived), or fails after `timeoutMs`. */
  async syncUntil(done: () => boolean, timeoutMs = 10_000, look?: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await look?.();
    while (!done()) {
      if (Date.now() > deadline) throw new Error("peer: the awaited state did not come");
      await this.sync();
      await look?.();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private async sendRequest(
    request: Request | KeysClaimRequest | ToDeviceRequest | SignatureUploadRequest | KeysQueryRequest,
  ): Promise<void> {
    const C = "/_matrix/client/v3";
    let answer: unknown;
    if (request instanceof KeysUploadRequest)
      answer = await this.call("POST", `${C}/keys/upload`, JSON.parse(request.body));
    else if (request instanceof KeysQueryRequest)
      answer = await this.call("POST", `${C}/keys/query`, JSON.parse(request.body));
    else if (request instanceof KeysClaimRequest)
      answer = await this.call("POST", `${C}/keys/claim`, JSON.parse(request.body));
    else if (request instanceof SignatureUploadRequest)
      answer = await this.call("POST", `${C}/keys/signatures/upload`, JSON.parse(request.body));
    else if (request instanceof ToDeviceRequest) {
      const path = `${C}/sendToDevice/${request.event_type}/${request.txn_id}`;
      answer = await this.call("PUT", path, JSON.parse(request.body));
    } else if (request instanceof RoomMessageRequest) {
      // An in-room verification step, in the clear even in an encrypted room, as matrix-js-sdk (Element) sends it.
      const path = `${C}/rooms/${encodeURIComponent(request.room_id)}/send/${request.event_type}/${request.txn_id}`;
      answer = await this.call("PUT", path, JSON.parse(request.body));
    } else return;
    if (request.id) await this.machine.markRequestAsSent(request.id, request.type, JSON.stringify(answer));
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.hs.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.accessToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json: unknown = await res.json();
    if (!res.ok) throw new Error(`peer: ${method} ${path} answered ${res.status} ${JSON.stringify(json)}`);
    return json;
  }
}
