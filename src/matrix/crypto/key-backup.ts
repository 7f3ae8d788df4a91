import { BackupDecryptionKey, RoomId, type OlmMachine } from "@matrix-org/matrix-sdk-crypto-wasm";
import { z } from "zod";
import type { Logger } from "../../core/log.js";
import { refusalOf } from "../matrix-retry.js";
import type { CryptoDevice } from "./crypto-device.js";
import { sendMachineRequest, type HomeserverCall } from "./outgoing-requests.js";
import type { SecretStorage } from "./secret-storage.js";

/** The only backup algorithm the spec defines. */
const ALGORITHM = "m.megolm_backup.v1.curve25519-aes-sha2";
const SECRET = "m.megolm_backup.v1";
const C = "/_matrix/client/v3";

const BackupInfoSchema = z.looseObject({
  version: z.string(),
  algorithm: z.string(),
  auth_data: z.looseObject({ public_key: z.string().optional() }),
});
type BackupInfo = z.infer<typeof BackupInfoSchema>;

const BackedUpKeysSchema = z.looseObject({
  rooms: z
    .record(
      z.string(),
      z.looseObject({
        sessions: z.record(
          z.string(),
          z.looseObject({
            session_data: z.looseObject({ ephemeral: z.string(), mac: z.string(), ciphertext: z.string() }),
          }),
        ),
      }),
    )
    .default({}),
});

/** What keeping the room keys backed up needs. */
export interface KeyBackupOptions {
  device: CryptoDevice;
  call: HomeserverCall;
  /** Secret storage under the recovery key: where the backup key is kept for the next device. */
  secrets: SecretStorage | undefined;
  log: Logger;
}

/** What this start did with the backup: which version is in use, and how many keys it restored. */
export interface BackupOutcome {
  version: string | null;
  restored: number;
}

async function currentBackup(call: HomeserverCall): Promise<BackupInfo | null> {
  try {
    const info = BackupInfoSchema.safeParse(await call("GET", `${C}/room_keys/version`, undefined));
    return info.success && info.data.algorithm === ALGORITHM ? info.data : null;
  } catch (err) {
    if (refusalOf(err).status === 404) return null;
    throw err;
  }
}

const publicKeyOf = (key: BackupDecryptionKey): string => key.megolmV1PublicKey.publicKeyBase64;

/**
 * Server-side key backup (`m.megolm_backup.v1.curve25519-aes-sha2`), as Element keeps it:
 * every room key the bot's device holds is encrypted to the backup's public key and
 * uploaded; the private key is in secret storage under the recovery key, so a new
 * device of the bot (after a lost store) restores the keys and reads what was sent
 * before. A backup the bot has no key for is left alone, and a new one is made only
 * when there is none, or when the recovery key is set and secret storage lacks it.
 */
export class KeyBackup {
  private version: string | null = null;

  constructor(private readonly options: KeyBackupOptions) {}

  /** Turns backup on for this device: the backup in use, made when needed; restores its keys into a device that lacked them. */
  async start(): Promise<BackupOutcome> {
    const { device, call, secrets, log } = this.options;
    const info = await currentBackup(call);
    return device.run(async (machine, save) => {
      const local = await machine.getBackupKeys();
      const mine = local.decryptionKey;
      if (info && mine && info.auth_data.public_key === publicKeyOf(mine)) {
        await this.enable(machine, info.version, mine);
        if (local.backupVersion !== info.version) await machine.saveBackupDecryptionKey(mine, info.version);
        // A recovery key set up after the backup (or a new one) gets the backup key too.
        if (secrets && (await secrets.get(SECRET)) === null) await secrets.put(SECRET, mine.toBase64());
        return { version: info.version, restored: 0 };
      }
      const stored = secrets ? await secrets.get(SECRET) : null;
      const key = stored ? BackupDecryptionKey.fromBase64(stored) : undefined;
      if (info && key && info.auth_data.public_key === publicKeyOf(key)) {
        await machine.saveBackupDecryptionKey(key, info.version);
        await save();
        await this.enable(machine, info.version, key);
        const restored = await this.restore(machine, info.version, key);
        log.info({ version: info.version, restored }, "matrix: room keys restored from the key backup");
        return { version: info.version, restored };
      }
      if (info && !secrets) {
        log.warn(
          { version: info.version },
          "matrix: the account has a key backup this device has no key for; set matrix.recoveryKey to use it",
        );
        return { version: null, restored: 0 };
      }
      const version = await this.create(machine, save);
      log.info({ version }, "matrix: started a key backup of the bot's room keys");
      return { version, restored: 0 };
    });
  }

  /** Uploads the room keys not backed up yet (call after keys arrived); a no-op while backup is off. */
  async backUp(): Promise<number> {
    if (!this.version) return 0;
    const { device, call } = this.options;
    return device.run(async (machine) => {
      let sent = 0;
      for (let round = 0; round < 100; round++) {
        const request = await machine.backupRoomKeys();
        if (!request) break;
        await sendMachineRequest(machine, request, call);
        sent += 1;
      }
      return sent;
    });
  }

  private async enable(machine: OlmMachine, version: string, key: BackupDecryptionKey): Promise<void> {
    await machine.enableBackupV1(publicKeyOf(key), version);
    this.version = version;
  }

  /** A new backup version signed by this device (and the master key), its key saved before it is used. */
  private async create(machine: OlmMachine, save: () => Promise<void>): Promise<string> {
    const key = BackupDecryptionKey.createRandomKey();
    const authData: Record<string, unknown> = { public_key: publicKeyOf(key) };
    const signatures = await machine.sign(JSON.stringify(authData));
    authData.signatures = JSON.parse(signatures.asJSON()) as unknown;
    const answer = z.object({ version: z.string() }).parse(
      await this.options.call("POST", `${C}/room_keys/version`, {
        algorithm: ALGORITHM,
        auth_data: authData,
      }),
    );
    await machine.saveBackupDecryptionKey(key, answer.version);
    await save();
    if (this.options.secrets) await this.options.secrets.put(SECRET, key.toBase64());
    await this.enable(machine, answer.version, key);
    return answer.version;
  }

  /** Downloads every backed-up key of `version` and imports those that decrypt. */
  private async restore(machine: OlmMachine, version: string, key: BackupDecryptionKey): Promise<number> {
    const answer = BackedUpKeysSchema.parse(
      await this.options.call("GET", `${C}/room_keys/keys?version=${encodeURIComponent(version)}`, undefined),
    );
    const byRoom = new Map<RoomId, Map<string, unknown>>();
    for (const [roomId, room] of Object.entries(answer.rooms)) {
      const sessions = new Map<string, unknown>();
      for (const [sessionId, backed] of Object.entries(room.sessions)) {
        const { ephemeral, mac, ciphertext } = backed.session_data;
        try {
          const session = JSON.parse(key.decryptV1(ephemeral, mac, ciphertext)) as Record<string, unknown>;
          sessions.set(sessionId, { ...session, session_id: sessionId, room_id: roomId });
        } catch (err) {
          this.options.log.warn(
            { err, roomId, sessionId },
            "matrix: a backed-up room key does not decrypt; skipped",
          );
        }
      }
      if (sessions.size > 0) byRoom.set(new RoomId(roomId), sessions);
    }
    if (byRoom.size === 0) return 0;
    const result = await machine.importBackedUpRoomKeys(byRoom, () => undefined, version);
    return result.importedCount;
  }
}
