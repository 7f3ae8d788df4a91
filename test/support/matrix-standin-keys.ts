import { StandinBackup } from "./matrix-standin-backup.js";
import { HttpError, type Call, type Reply, type StandinRouter } from "./matrix-standin-http.js";
import { StandinSigning, type Signed } from "./matrix-standin-signing.js";

interface StandinDevice {
  keys?: Signed;
  oneTimeKeys: Map<string, unknown>;
  fallbackKeys: Map<string, { key: unknown; used: boolean }>;
  inbox: { pos: number; event: Record<string, unknown> }[];
}

/** The stream the key server shares with the rooms: positions for sync tokens, and a wake-up. */
export interface KeyStream {
  /** Takes the next stream position and wakes waiting syncs. */
  tick(): number;
  /** Users who share a room with `userId` (including itself). */
  roomPeers(userId: string): Set<string>;
  /** The device of an access token. */
  deviceOf(token: string): string;
  /** A user's account password (user-interactive auth). */
  passwordOf(userId: string): string | undefined;
}

const C = "/_matrix/client/v3";

/**
 * The end-to-end encryption endpoints of the homeserver stand-in, with the server-side
 * rules the spec and Synapse enforce: device keys, one-time and fallback keys (a
 * one-time key id uploaded twice is refused, each key is claimed once), to-device
 * messages per device (idempotent per token and transaction id), and device-list
 * changes and key counts in sync.
 */
export class StandinKeys {
  private readonly users = new Map<string, Map<string, StandinDevice>>();
  private readonly changes: { pos: number; userId: string }[] = [];
  private readonly txns = new Set<string>();
  /** Devices whose to-device messages are held back (`user|device` → messages), to deliver late. */
  private readonly held = new Map<
    string,
    { sender: string; type: string; content: Record<string, unknown> }[]
  >();
  /** to-device messages sent, for tests that check who was given keys. */
  readonly sent: { pos: number; sender: string; type: string; userId: string; deviceId: string }[] = [];
  /** Cross-signing keys and signatures. */
  readonly signing: StandinSigning;
  /** Server-side key backup. */
  readonly backup = new StandinBackup();

  constructor(private readonly stream: KeyStream) {
    this.signing = new StandinSigning({
      deviceKeys: (userId, deviceId) => this.users.get(userId)?.get(deviceId)?.keys,
      passwordOf: (userId) => stream.passwordOf(userId),
      changed: (userId) => this.changes.push({ pos: this.stream.tick(), userId }),
    });
  }

  /** Adds the routes to the stand-in's router. */
  routes(router: StandinRouter): void {
    this.signing.routes(router);
    this.backup.routes(router);
    const route = router.add.bind(router);
    route("POST", `${C}/keys/upload`, (c) => this.upload(c));
    route("POST", `${C}/keys/query`, (c) => this.query(c));
    route("POST", `${C}/keys/claim`, (c) => this.claim(c));
    route("PUT", `${C}/sendToDevice/:type/:txn`, (c) => this.sendToDevice(c));
  }

  /** A device's uploaded identity, if any. */
  deviceKeys(userId: string, deviceId: string): Signed | undefined {
    return this.users.get(userId)?.get(deviceId)?.keys;
  }

  /** Holds back to-device messages to a device until `release` (a key that arrives late). */
  hold(userId: string, deviceId: string): void {
    this.held.set(`${userId}|${deviceId}`, []);
  }

  /** Delivers what was held for the device, in order, and stops holding. */
  release(userId: string, deviceId: string): void {
    const messages = this.held.get(`${userId}|${deviceId}`) ?? [];
    this.held.delete(`${userId}|${deviceId}`);
    for (const m of messages) this.deliver(m.sender, m.type, userId, deviceId, m.content);
  }

  /** Forgets a device (as `DELETE /devices` would): its keys and its inbox. */
  deleteDevice(userId: string, deviceId: string): void {
    this.users.get(userId)?.delete(deviceId);
    this.changes.push({ pos: this.stream.tick(), userId });
  }

  /** The crypto parts of a sync response for one device since stream position `since`. */
  syncPart(userId: string, deviceId: string, since: number | null): Record<string, unknown> {
    const device = this.device(userId, deviceId);
    const from = since ?? 0;
    // Like Synapse, to-device messages up to the `since` the client came back with are acknowledged.
    if (since !== null) device.inbox = device.inbox.filter((m) => m.pos > since);
    const peers = this.stream.roomPeers(userId);
    const changed =
      since === null
        ? []
        : [...new Set(this.changes.filter((c) => c.pos > from && peers.has(c.userId)).map((c) => c.userId))];
    return {
      to_device: { events: device.inbox.filter((m) => m.pos > from).map((m) => m.event) },
      device_lists: { changed, left: [] },
      device_one_time_keys_count: { signed_curve25519: device.oneTimeKeys.size },
      device_unused_fallback_key_types: [...device.fallbackKeys.entries()]
        .filter(([, k]) => !k.used)
        .map(([id]) => id.split(":")[0] ?? ""),
    };
  }

  /** Whether anything for this device arrived after `since` (a long-poll may return). */
  hasNews(userId: string, deviceId: string, since: number): boolean {
    const device = this.users.get(userId)?.get(deviceId);
    const peers = this.stream.roomPeers(userId);
    return (
      (device?.inbox.some((m) => m.pos > since) ?? false) ||
      this.changes.some((c) => c.pos > since && peers.has(c.userId))
    );
  }

  private device(userId: string, deviceId: string): StandinDevice {
    let devices = this.users.get(userId);
    if (!devices) this.users.set(userId, (devices = new Map()));
    let device = devices.get(deviceId);
    if (!device) {
      device = { oneTimeKeys: new Map(), fallbackKeys: new Map(), inbox: [] };
      devices.set(deviceId, device);
    }
    return device;
  }

  private upload(c: Call): Reply {
    const deviceId = this.stream.deviceOf(c.token);
    const device = this.device(c.userId, deviceId);
    const body = c.json as {
      device_keys?: Signed;
      one_time_keys?: Record<string, unknown>;
      fallback_keys?: Record<string, unknown>;
    };
    for (const [id, key] of Object.entries(body.one_time_keys ?? {})) {
      const old = device.oneTimeKeys.get(id);
      if (old !== undefined && JSON.stringify(old) !== JSON.stringify(key)) {
        throw new HttpError(400, "M_UNKNOWN", `One time key ${id} already exists.`);
      }
    }
    for (const [id, key] of Object.entries(body.one_time_keys ?? {})) device.oneTimeKeys.set(id, key);
    for (const [id, key] of Object.entries(body.fallback_keys ?? {})) {
      device.fallbackKeys.clear();
      device.fallbackKeys.set(id, { key, used: false });
    }
    if (body.device_keys) {
      if (device.keys && JSON.stringify(device.keys.keys) !== JSON.stringify(body.device_keys.keys)) {
        throw new HttpError(400, "M_UNKNOWN", "device keys differ from the uploaded ones");
      }
      const fresh = device.keys === undefined;
      // Signatures uploaded since (the owner's self-signing key) stay with the keys.
      device.keys = {
        ...body.device_keys,
        signatures: { ...(device.keys?.signatures ?? {}), ...(body.device_keys as Signed).signatures },
      };
      if (fresh) this.changes.push({ pos: this.stream.tick(), userId: c.userId });
    }
    return { json: { one_time_key_counts: { signed_curve25519: device.oneTimeKeys.size } } };
  }

  private query(c: Call): Reply {
    const wanted = (c.json.device_keys ?? {}) as Record<string, string[]>;
    const answer: Record<string, Record<string, unknown>> = {};
    for (const [userId, deviceIds] of Object.entries(wanted)) {
      const devices = this.users.get(userId) ?? new Map<string, StandinDevice>();
      const out: Record<string, unknown> = {};
      for (const [id, device] of devices) {
        if (device.keys && (deviceIds.length === 0 || deviceIds.includes(id))) out[id] = device.keys;
      }
      answer[userId] = out;
    }
    return {
      json: { device_keys: answer, failures: {}, ...this.signing.queryPart(c.userId, Object.keys(wanted)) },
    };
  }

  private claim(c: Call): Reply {
    const wanted = (c.json.one_time_keys ?? {}) as Record<string, Record<string, string>>;
    const answer: Record<string, Record<string, Record<string, unknown>>> = {};
    for (const [userId, devices] of Object.entries(wanted)) {
      for (const [deviceId, algorithm] of Object.entries(devices)) {
        const device = this.users.get(userId)?.get(deviceId);
        if (!device) continue;
        const otk = [...device.oneTimeKeys.entries()].find(([id]) => id.startsWith(`${algorithm}:`));
        let claimed: [string, unknown] | undefined;
        if (otk) {
          device.oneTimeKeys.delete(otk[0]);
          claimed = otk;
        } else {
          const fallback = [...device.fallbackKeys.entries()].find(([id]) => id.startsWith(`${algorithm}:`));
          if (fallback) {
            fallback[1].used = true;
            claimed = [fallback[0], fallback[1].key];
          }
        }
        if (claimed) (answer[userId] ??= {})[deviceId] = { [claimed[0]]: claimed[1] };
      }
    }
    return { json: { one_time_keys: answer, failures: {} } };
  }

  private sendToDevice(c: Call): Reply {
    const [type = "", txn = ""] = c.params;
    const txnKey = `${c.token}\u0000${txn}`;
    if (this.txns.has(txnKey)) return { json: {} };
    this.txns.add(txnKey);
    const messages = (c.json.messages ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
    for (const [userId, byDevice] of Object.entries(messages)) {
      for (const [deviceId, content] of Object.entries(byDevice)) {
        const targets = deviceId === "*" ? [...(this.users.get(userId)?.keys() ?? [])] : [deviceId];
        for (const target of targets) {
          const held = this.held.get(`${userId}|${target}`);
          if (held) held.push({ sender: c.userId, type, content });
          else this.deliver(c.userId, type, userId, target, content);
        }
      }
    }
    return { json: {} };
  }

  private deliver(
    sender: string,
    type: string,
    userId: string,
    deviceId: string,
    content: Record<string, unknown>,
  ): void {
    const pos = this.stream.tick();
    this.device(userId, deviceId).inbox.push({ pos, event: { type, sender, content } });
    this.sent.push({ pos, sender, type, userId, deviceId });
  }
}
