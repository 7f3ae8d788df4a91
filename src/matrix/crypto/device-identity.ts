import type { Logger } from "../../core/log.js";
import type { CryptoDevice } from "./crypto-device.js";
import { setUpCrossSigning } from "./cross-signing.js";
import { KeyBackup } from "./key-backup.js";
import type { HomeserverCall } from "./outgoing-requests.js";
import { WrongRecoveryKeyError, type SecretStorage } from "./secret-storage.js";
import type { UserAuth } from "./user-auth.js";

/** What making the device trusted needs. */
export interface DeviceIdentityOptions {
  userId: string;
  deviceId: string;
  call: HomeserverCall;
  /** Secret storage under matrix.recoveryKey, when one is set. */
  secrets: SecretStorage | undefined;
  auth: UserAuth;
  log: Logger;
  /** Replace the account's cross-signing identity (`roomgate matrix setup --reset`). */
  reset?: boolean;
  /** Fail on any error instead of serving unsigned (`roomgate matrix setup`, where the operator is watching). */
  strict?: boolean;
}

/**
 * Makes each device the bot owns one that Element trusts, before it serves a room:
 * cross-signed by the bot account (the identity created once, then restored from secret
 * storage on any later device), and with its room keys in the account's key backup
 * (restored into a device that lacks them, uploaded as new ones arrive). A device whose
 * identity cannot be set up still serves (unsigned, as before) and the log says why; a
 * recovery key that does not open the account's secret storage is an error.
 */
export class DeviceIdentity {
  private backup: KeyBackup | undefined;
  private backingUp: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DeviceIdentityOptions) {}

  /** Sets the freshly owned device up; resolves once it is signed and its backed-up keys are in. */
  async attach(device: CryptoDevice): Promise<void> {
    const { userId, deviceId, call, secrets, auth, log } = this.options;
    const reset = this.options.reset === true;
    try {
      await setUpCrossSigning({ device, userId, deviceId, call, secrets, auth, log, reset });
    } catch (err) {
      if (err instanceof WrongRecoveryKeyError || this.options.strict) throw err;
      log.error({ err, deviceId }, "matrix: the bot's device could not be cross-signed; it serves unsigned");
    }
    const backup = new KeyBackup({ device, call, secrets, log });
    try {
      await backup.start();
      this.backup = backup;
      device.onRoomKeys(() => this.backUpSoon());
      await backup.backUp();
    } catch (err) {
      if (err instanceof WrongRecoveryKeyError || this.options.strict) throw err;
      log.error({ err, deviceId }, "matrix: key backup could not be started; room keys are not backed up");
    }
  }

  /** Uploads newly arrived room keys to the backup, one run at a time, after the machine's current work. */
  private backUpSoon(): void {
    const backup = this.backup;
    if (!backup) return;
    this.backingUp = this.backingUp
      .then(() => backup.backUp())
      .catch((err: unknown) =>
        this.options.log.warn({ err }, "matrix: backing up room keys failed; the next keys try again"),
      );
  }
}
