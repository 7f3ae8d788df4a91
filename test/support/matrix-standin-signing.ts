import { createPublicKey, randomBytes, verify } from "node:crypto";
import { HttpError, type Call, type Reply, type StandinRouter } from "./matrix-standin-http.js";

/** A signed JSON object as the key endpoints carry it (device keys, cross-signing keys). */
export type Signed = Record<string, unknown> & { signatures?: Record<string, Record<string, string>> };

/** The JSON the spec signs: keys sorted, no whitespace, without `signatures` and `unsigned`. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Whether `object` carries a valid ed25519 signature by `signer` with key id `keyId` and public key `publicKey`. */
export function signedBy(object: Signed, signer: string, keyId: string, publicKey: string): boolean {
  const signature = object.signatures?.[signer]?.[`ed25519:${keyId}`];
  if (!signature) return false;
  const { signatures: _s, unsigned: _u, ...body } = object;
  try {
    const key = createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey, "base64").toString("base64url") },
      format: "jwk",
    });
    return verify(null, Buffer.from(canonicalJson(body)), key, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}

/** The one ed25519 public key of a cross-signing key object. */
export function publicKeyOf(key: Signed): string {
  const keys = (key.keys ?? {}) as Record<string, string>;
  const [value] = Object.values(keys);
  if (!value) throw new HttpError(400, "M_INVALID_PARAM", "a cross-signing key needs one key");
  return value;
}

function mergeSignatures(into: Signed, from: Signed): void {
  for (const [signer, sigs] of Object.entries(from.signatures ?? {})) {
    into.signatures ??= {};
    into.signatures[signer] = { ...(into.signatures[signer] ?? {}), ...sigs };
  }
}

interface CrossSigning {
  master: Signed;
  selfSigning: Signed;
  userSigning?: Signed;
}

/** What the cross-signing endpoints need from the key server: device keys, passwords and device-list changes. */
export interface SigningHost {
  deviceKeys(userId: string, deviceId: string): Signed | undefined;
  passwordOf(userId: string): string | undefined;
  /** A user's keys changed: their peers see them in `device_lists.changed`. */
  changed(userId: string): void;
}

const C = "/_matrix/client/v3";

/**
 * Cross-signing on the homeserver stand-in, with Synapse's rules: the first upload of a
 * user's cross-signing keys needs only the access token, a later one (a reset)
 * user-interactive auth with the account password; the self-signing and user-signing
 * keys must be signed by the master key; a signature upload is checked and merged into
 * the signed device or master key (other users see a user-signing signature only when
 * it is their own); `/keys/query` answers with the master and self-signing keys, and the
 * user-signing key to its owner only.
 */
export class StandinSigning {
  private readonly users = new Map<string, CrossSigning>();
  /** Signatures users made on other users' master keys (signer → target → signatures). */
  private readonly userSignatures = new Map<string, Map<string, Signed>>();
  private readonly sessions = new Set<string>();
  /** Every accepted cross-signing upload, in order, for tests. */
  readonly uploads: { userId: string; auth: boolean }[] = [];

  constructor(private readonly host: SigningHost) {}

  routes(router: StandinRouter): void {
    router.add("POST", `${C}/keys/device_signing/upload`, (c) => this.upload(c));
    router.add("POST", `${C}/keys/signatures/upload`, (c) => this.signatures(c));
  }

  /** The user's public cross-signing keys, if set up. */
  keysOf(userId: string): CrossSigning | undefined {
    return this.users.get(userId);
  }

  /** The cross-signing parts of a `/keys/query` answer for `asker`. */
  queryPart(asker: string, users: string[]): Record<string, Record<string, unknown>> {
    const master: Record<string, unknown> = {};
    const selfSigning: Record<string, unknown> = {};
    const userSigning: Record<string, unknown> = {};
    for (const userId of users) {
      const keys = this.users.get(userId);
      if (!keys) continue;
      const own = this.userSignatures.get(asker)?.get(userId);
      const shown: Signed = structuredClone(keys.master);
      if (own) mergeSignatures(shown, own);
      master[userId] = shown;
      selfSigning[userId] = keys.selfSigning;
      if (userId === asker && keys.userSigning) userSigning[userId] = keys.userSigning;
    }
    return { master_keys: master, self_signing_keys: selfSigning, user_signing_keys: userSigning };
  }

  /** Drops a user's cross-signing keys (an admin reset), so the next upload needs no password. */
  forget(userId: string): void {
    this.users.delete(userId);
  }

  private upload(c: Call): Reply {
    const body = c.json as { master_key?: Signed; self_signing_key?: Signed; user_signing_key?: Signed };
    const existing = this.users.get(c.userId);
    let authed = false;
    if (existing) {
      authed = this.checkAuth(c);
      if (!authed) {
        const session = randomBytes(8).toString("hex");
        this.sessions.add(session);
        return {
          status: 401,
          json: { flows: [{ stages: ["m.login.password"] }], params: {}, session },
        };
      }
    }
    const master = body.master_key ?? existing?.master;
    if (!master) throw new HttpError(400, "M_MISSING_PARAM", "master_key is required");
    const masterKey = publicKeyOf(master);
    for (const [name, key] of [
      ["self_signing_key", body.self_signing_key],
      ["user_signing_key", body.user_signing_key],
    ] as const) {
      if (key && !signedBy(key, c.userId, masterKey, masterKey)) {
        throw new HttpError(400, "M_INVALID_SIGNATURE", `${name} is not signed by the master key`);
      }
    }
    const selfSigning = body.self_signing_key ?? existing?.selfSigning;
    if (!selfSigning) throw new HttpError(400, "M_MISSING_PARAM", "self_signing_key is required");
    const userSigning = body.user_signing_key ?? existing?.userSigning;
    this.users.set(c.userId, { master, selfSigning, ...(userSigning ? { userSigning } : {}) });
    this.uploads.push({ userId: c.userId, auth: authed });
    this.host.changed(c.userId);
    return { json: {} };
  }

  private checkAuth(c: Call): boolean {
    const auth = c.json.auth as
      { type?: string; session?: string; password?: string; identifier?: { user?: string } } | undefined;
    if (!auth) return false;
    if (auth.type !== "m.login.password" || !auth.session || !this.sessions.has(auth.session)) {
      throw new HttpError(401, "M_FORBIDDEN", "unknown auth session or type");
    }
    const user = auth.identifier?.user ?? "";
    const userId = user.startsWith("@") ? user : `@${user}:${c.userId.split(":").slice(1).join(":")}`;
    if (userId !== c.userId || auth.password !== this.host.passwordOf(c.userId)) {
      throw new HttpError(401, "M_FORBIDDEN", "Invalid username or password");
    }
    this.sessions.delete(auth.session);
    return true;
  }

  private signatures(c: Call): Reply {
    const failures: Record<string, Record<string, unknown>> = {};
    const fail = (userId: string, keyId: string, error: string) =>
      ((failures[userId] ??= {})[keyId] = { errcode: "M_INVALID_SIGNATURE", error });
    for (const [userId, objects] of Object.entries(c.json as Record<string, Record<string, Signed>>)) {
      for (const [keyId, signed] of Object.entries(objects)) {
        const target = this.targetOf(userId, keyId);
        if (!target) {
          fail(userId, keyId, "no such device or key");
          continue;
        }
        const valid = this.validSigner(c.userId, userId, target, signed);
        if (!valid) {
          fail(userId, keyId, "the signature does not verify");
          continue;
        }
        if (userId === c.userId) mergeSignatures(target, signed);
        else {
          let mine = this.userSignatures.get(c.userId);
          if (!mine) this.userSignatures.set(c.userId, (mine = new Map()));
          const kept: Signed = mine.get(userId) ?? {};
          mergeSignatures(kept, signed);
          mine.set(userId, kept);
        }
        this.host.changed(userId);
      }
    }
    return { json: { failures } };
  }

  /** The object a signature upload signs: an own device's keys or a master key. */
  private targetOf(userId: string, keyId: string): Signed | undefined {
    const device = this.host.deviceKeys(userId, keyId);
    if (device) return device;
    const master = this.users.get(userId)?.master;
    return master && publicKeyOf(master) === keyId ? master : undefined;
  }

  /** Whether `signed` (the uploaded copy) is `target` itself, signed by a key of the uploader. */
  private validSigner(signer: string, userId: string, target: Signed, signed: Signed): boolean {
    const { signatures: _a, unsigned: _b, ...mine } = target;
    const { signatures: _c, unsigned: _d, ...theirs } = signed;
    if (canonicalJson(mine) !== canonicalJson(theirs)) return false;
    const keys = this.users.get(signer);
    const candidates: string[] = [];
    if (keys) candidates.push(publicKeyOf(keys.selfSigning), publicKeyOf(keys.master));
    if (keys?.userSigning && userId !== signer) candidates.push(publicKeyOf(keys.userSigning));
    // A device signs its own user's master key (the bootstrap does).
    for (const [id, sig] of Object.entries(signed.signatures?.[signer] ?? {})) {
      if (!sig || !id.startsWith("ed25519:")) continue;
      const deviceId = id.slice("ed25519:".length);
      const device = this.host.deviceKeys(signer, deviceId);
      const deviceKey = (device?.keys as Record<string, string> | undefined)?.[id];
      if (deviceKey && signedBy(signed, signer, deviceId, deviceKey)) return true;
      if (candidates.includes(deviceId) && signedBy(signed, signer, deviceId, deviceId)) return true;
    }
    return false;
  }
}
