import {
  ClientEvent,
  createClient,
  MatrixError,
  SyncState,
  type AuthDict,
  type MatrixClient,
  type MatrixEvent,
} from "matrix-js-sdk";
import {
  EventShieldColour,
  OnlySignedDevicesIsolationMode,
  VerificationPhase,
  VerifierEvent,
  type CryptoApi,
  type ShowSasCallbacks,
  type VerificationRequest,
} from "matrix-js-sdk/lib/crypto-api/index.js";
import { logger as sdkModuleLogger, type Logger } from "matrix-js-sdk/lib/logger.js";
import { waitFor } from "../support/wait.js";

/**
 * Element's SDK logs every sync and key request; the test's own failures say what matters,
 * so only its errors are kept.
 */
const quiet: Logger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (...msg: unknown[]) => console.error("matrix-js-sdk:", ...msg),
  getChild: () => quiet,
};

/**
 * Some of the SDK's modules (events, rooms, call sessions) log through its module-level
 * logger (a loglevel logger), not the client's: its errors only, for it and the child
 * loggers it makes from now on (they inherit its method factory).
 */
function quietModuleLogger(): void {
  type Factory = (method: string, level: number, name: string | symbol) => (...msg: unknown[]) => void;
  const root = sdkModuleLogger as unknown as { methodFactory: Factory; rebuild(): void };
  const loud = root.methodFactory;
  root.methodFactory = (method, level, name) =>
    method === "error" ? loud(method, level, name) : () => undefined;
  root.rebuild();
}
quietModuleLogger();

/** One timeline event as the person's client shows it. */
export interface ElementEvent {
  eventId: string;
  sender: string;
  /** The clear type once decrypted (m.room.message), else m.room.encrypted. */
  type: string;
  body: string | undefined;
  inReplyTo: string | undefined;
  /** It came encrypted and this client decrypted it. */
  decrypted: boolean;
  /** Why it could not be decrypted (matrix-js-sdk's DecryptionFailureCode), when it could not. */
  failure: string | undefined;
  /** The sending device, as the encrypted event names it. */
  deviceId: string | undefined;
  /** Element's shield beside the event: "none", "grey" or "red", and its reason code. */
  shield: "none" | "grey" | "red" | undefined;
  shieldReason: number | null | undefined;
}

const SHIELDS = {
  [EventShieldColour.NONE]: "none",
  [EventShieldColour.GREY]: "grey",
  [EventShieldColour.RED]: "red",
} as const;

/**
 * A person on Element's own SDK (matrix-js-sdk with the Rust crypto in wasm), set up as
 * Element sets a person up when it excludes insecure devices: her device cross-signed by
 * her own identity, and `OnlySignedDevicesIsolationMode` (room keys only for devices
 * their owner cross-signed; messages from other devices not decrypted).
 */
export class ElementHuman {
  private constructor(
    readonly client: MatrixClient,
    readonly userId: string,
    readonly deviceId: string,
    private readonly password: string,
  ) {}

  get crypto(): CryptoApi {
    return this.client.getCrypto()!;
  }

  /**
   * Logs in as a new device, syncs, and cross-signs it: with the account's identity made
   * now (`newIdentity`, or when the account has none) — otherwise the device is left unsigned;
   * then excludes insecure devices unless `strict` is false.
   */
  static async login(
    homeserver: string,
    userId: string,
    password: string,
    deviceName: string,
    options: { newIdentity?: boolean; strict?: boolean } = {},
  ): Promise<ElementHuman> {
    const login = await createClient({ baseUrl: homeserver, logger: quiet }).loginRequest({
      type: "m.login.password",
      identifier: { type: "m.id.user", user: userId },
      password,
      initial_device_display_name: deviceName,
    });
    const client = createClient({
      baseUrl: homeserver,
      userId,
      deviceId: login.device_id,
      accessToken: login.access_token,
      logger: quiet,
    });
    await client.initRustCrypto({ useIndexedDB: false });
    const human = new ElementHuman(client, userId, login.device_id, password);
    if (options.newIdentity) {
      // Replaced before her client's first sync: a key query the sync loop sends while the new
      // keys are uploaded (two round trips with the password) answers with the old master key, and
      // the machine then drops the new private keys as not matching, so the device never sees
      // itself signed (seen in 3 of 3 runs with the reset after the first sync).
      await human.crypto.bootstrapCrossSigning({
        setupNewCrossSigning: true,
        authUploadDeviceSigningKeys: (makeRequest) => human.withPassword(makeRequest),
      });
    }
    await human.syncing(() => client.startClient({ initialSyncLimit: 50 }));
    if (!options.newIdentity && !(await human.crypto.userHasCrossSigningKeys(userId, true))) {
      await human.crypto.bootstrapCrossSigning({
        authUploadDeviceSigningKeys: (makeRequest) => human.withPassword(makeRequest),
      });
    }
    if (options.strict === false) return human;
    // Her client sends nothing in strict mode until it has seen its own device signed (Synapse tells it by sync).
    await waitFor(
      async () =>
        (await human.crypto.getDeviceVerificationStatus(userId, human.deviceId))?.crossSigningVerified,
      30_000,
      `${deviceName} to be cross-signed by its owner`,
    ).catch(async (err: unknown) => {
      // What her client knows of itself, to tell a lost private key from a signature not seen yet.
      const device = await human.crypto.getDeviceVerificationStatus(userId, human.deviceId);
      const status = await human.crypto.getCrossSigningStatus();
      throw new Error(
        `${deviceName} is not cross-signed in its own eyes: device ${JSON.stringify(device)}, cross-signing ${JSON.stringify(status)}`,
        { cause: err },
      );
    });
    human.crypto.setDeviceIsolationMode(new OnlySignedDevicesIsolationMode());
    return human;
  }

  /** Runs `start` (the client's sync) and resolves once a sync has come back. */
  private async syncing(start: () => Promise<void>): Promise<void> {
    const synced = new Promise<void>((resolve) => {
      const onSync = (state: SyncState) => {
        if (state !== SyncState.Prepared && state !== SyncState.Syncing) return;
        this.client.off(ClientEvent.Sync, onSync);
        resolve();
      };
      this.client.on(ClientEvent.Sync, onSync);
    });
    await start();
    await synced;
  }

  /** User-interactive auth as Element does it: the token alone first, the password when asked. */
  private async withPassword<T>(makeRequest: (auth: AuthDict | null) => Promise<T>): Promise<T> {
    try {
      return await makeRequest(null);
    } catch (err) {
      if (!(err instanceof MatrixError) || err.httpStatus !== 401) throw err;
      const session = (err.data as { session?: string }).session;
      return makeRequest({
        type: "m.login.password",
        identifier: { type: "m.id.user", user: this.userId },
        password: this.password,
        ...(session ? { session } : {}),
      });
    }
  }

  /** Creates an encrypted private room and waits until the client has it. */
  async createEncryptedRoom(name: string): Promise<string> {
    const { room_id } = await this.client.createRoom({
      name,
      initial_state: [
        { type: "m.room.encryption", state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } },
      ],
    });
    await waitFor(() => this.client.getRoom(room_id)?.hasEncryptionStateEvent(), 30_000, `room ${room_id}`);
    return room_id;
  }

  async invite(roomId: string, userId: string): Promise<void> {
    await this.client.invite(roomId, userId);
  }

  /** Joins a room she was invited to and waits until the client has it. */
  async join(roomId: string): Promise<void> {
    await this.client.joinRoom(roomId);
    await this.hasRoom(roomId);
  }

  /** Waits until this client shares the room (another device of hers may have created it). */
  async hasRoom(roomId: string): Promise<void> {
    await waitFor(() => this.client.getRoom(roomId)?.hasEncryptionStateEvent(), 30_000, `room ${roomId}`);
  }

  /** Sends a text message (encrypted in an encrypted room, for the devices the isolation mode allows). */
  async say(roomId: string, body: string): Promise<string> {
    return (await this.client.sendTextMessage(roomId, body)).event_id;
  }

  /** Every event of the room's live timeline, decrypted where this client can. */
  async events(roomId: string): Promise<ElementEvent[]> {
    const room = this.client.getRoom(roomId);
    if (!room) return [];
    const out: ElementEvent[] = [];
    for (const event of room.getLiveTimeline().getEvents()) {
      if (event.isState()) continue;
      out.push(await this.describe(event));
    }
    return out;
  }

  private async describe(event: MatrixEvent): Promise<ElementEvent> {
    await this.client.decryptEventIfNeeded(event);
    const content = event.getContent() as {
      body?: unknown;
      "m.relates_to"?: { "m.in_reply_to"?: { event_id?: string } };
    };
    const info = event.isEncrypted() ? await this.crypto.getEncryptionInfoForEvent(event) : null;
    return {
      eventId: event.getId() ?? "",
      sender: event.getSender() ?? "",
      type: event.getType(),
      body: typeof content.body === "string" ? content.body : undefined,
      inReplyTo: content["m.relates_to"]?.["m.in_reply_to"]?.event_id,
      decrypted: event.isEncrypted() && !event.isDecryptionFailure(),
      failure: event.decryptionFailureReason ?? undefined,
      deviceId: (event.getWireContent() as { device_id?: string }).device_id,
      shield: info ? SHIELDS[info.shieldColour] : undefined,
      shieldReason: info?.shieldReason,
    };
  }

  /** The first event of the room that `match` accepts, waiting up to `timeoutMs` for it. */
  async waitFor(
    roomId: string,
    match: (e: ElementEvent) => boolean,
    timeoutMs = 30_000,
  ): Promise<ElementEvent> {
    return waitFor(async () => (await this.events(roomId)).find(match), timeoutMs, `an event in ${roomId}`);
  }

  /**
   * Verifies `userId` as Element's "Verify user" does (a request in a room), or one of their
   * devices by a to-device request (Element's "Verify session"): SAS once the
   * other side is ready; `compare` gets her emoji and says whether they match the other
   * side's. Resolves when the verification is done.
   */
  async verifyUser(
    userId: string,
    via: { roomId: string } | { deviceId: string },
    compare: (emoji: string[]) => Promise<boolean>,
  ): Promise<void> {
    const request: VerificationRequest =
      "roomId" in via
        ? await this.crypto.requestVerificationDM(userId, via.roomId)
        : await this.crypto.requestDeviceVerification(userId, via.deviceId);
    await waitFor(
      () => request.phase === VerificationPhase.Ready || request.phase === VerificationPhase.Cancelled,
      60_000,
      `${userId} to accept the verification`,
    );
    if (request.phase === VerificationPhase.Cancelled)
      throw new Error(`verification cancelled: ${request.cancellationCode}`);
    const verifier = await request.startVerification("m.sas.v1");
    verifier.on(VerifierEvent.ShowSas, (sas: ShowSasCallbacks) => {
      const emoji = (sas.sas.emoji ?? []).map(([symbol, name]) => `${symbol} ${name}`);
      void compare(emoji).then(
        (same) => (same ? sas.confirm() : sas.mismatch()),
        () => sas.cancel(),
      );
    });
    // Bounded below the test's timeout, so that a stuck step is reported with what each side saw.
    await Promise.race([
      verifier.verify(),
      new Promise((_, reject) =>
        setTimeout(
          () =>
            reject(
              new Error(
                `verification stuck: phase ${request.phase}, cancelled ${request.cancellationCode ?? "no"}`,
              ),
            ),
          50_000,
        ).unref(),
      ),
    ]);
  }

  async close(): Promise<void> {
    this.client.stopClient();
  }
}
