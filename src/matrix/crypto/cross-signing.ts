import type { SignatureUploadRequest } from "@matrix-org/matrix-sdk-crypto-wasm";
import { DeviceId, KeysUploadRequest, UserId, type OlmMachine } from "@matrix-org/matrix-sdk-crypto-wasm";
import { RoomgateError } from "../../core/errors.js";
import type { Logger } from "../../core/log.js";
import type { CryptoDevice } from "./crypto-device.js";
import { sendMachineRequest, type HomeserverCall } from "./outgoing-requests.js";
import type { SecretStorage } from "./secret-storage.js";
import { postWithUserAuth, type UserAuth } from "./user-auth.js";

/** What became of the bot's cross-signing identity at this start. */
export type CrossSigningOutcome =
  /** A new identity was made and published (first start, or a reset). */
  | "created"
  /** The private keys came from secret storage (a new device, a lost store). */
  | "restored"
  /** The device had the keys already. */
  | "present";

/** The account has a cross-signing identity this device has no private keys for, and no recovery key opens them. */
export class CrossSigningKeysUnavailableError extends RoomgateError {
  constructor(userId: string, why: string) {
    super(
      `matrix: ${userId} has a cross-signing identity whose private keys this device does not have (${why}), ` +
        "so the bot's device cannot be signed and clients that exclude unverified devices will not talk to it. " +
        "Set matrix.recoveryKey (MATRIX_RECOVERY_KEY) to the key `roomgate matrix setup` printed, or replace the " +
        "identity with `roomgate matrix setup --reset`",
    );
  }
}

/** What setting the identity up needs. */
export interface CrossSigningOptions {
  device: CryptoDevice;
  userId: string;
  deviceId: string;
  call: HomeserverCall;
  /** The account's secret storage under the recovery key; without it the keys live in the device's store only. */
  secrets: SecretStorage | undefined;
  auth: UserAuth;
  log: Logger;
  /** Make a new identity even when the account has one (`roomgate matrix setup --reset`). */
  reset?: boolean;
}

const NAMES = {
  master: "m.cross_signing.master",
  selfSigning: "m.cross_signing.self_signing",
  userSigning: "m.cross_signing.user_signing",
} as const;

/** Fetches our own identity and devices from the homeserver into the machine. */
async function learnOwnKeys(machine: OlmMachine, userId: string, call: HomeserverCall): Promise<void> {
  await sendMachineRequest(machine, machine.queryKeysForUsers([new UserId(userId)]), call);
}

/** Whether our identity is published, as the machine knows after `learnOwnKeys` (the object is freed: it holds the store open). */
async function hasOwnIdentity(machine: OlmMachine, userId: string): Promise<boolean> {
  const identity = await machine.getIdentity(new UserId(userId));
  identity?.free();
  return identity !== undefined;
}

/** Signs our own device with the self-signing key when its signature is not published yet. */
async function signOwnDevice(
  machine: OlmMachine,
  userId: string,
  deviceId: string,
  call: HomeserverCall,
): Promise<boolean> {
  const device = await machine.getDevice(new UserId(userId), new DeviceId(deviceId));
  try {
    if (!device || device.isCrossSignedByOwner()) return false;
    await sendMachineRequest(machine, await device.verify(), call);
    return true;
  } finally {
    device?.free();
  }
}

/** Saves the machine's private cross-signing keys in secret storage (what Element's recovery reads). */
async function storeKeys(machine: OlmMachine, secrets: SecretStorage): Promise<void> {
  const exported = await machine.exportCrossSigningKeys();
  if (!exported?.masterKey || !exported.self_signing_key || !exported.userSigningKey) return;
  await secrets.put(NAMES.master, exported.masterKey);
  await secrets.put(NAMES.selfSigning, exported.self_signing_key);
  await secrets.put(NAMES.userSigning, exported.userSigningKey);
}

/**
 * Makes the bot's device one its owner cross-signed, the way Element sets a device up
 * (matrix-js-sdk `CrossSigningIdentity.bootstrapCrossSigning`):
 * - the device has the private keys: it signs itself if it is not signed yet, and puts
 *   the keys into secret storage when they are not there;
 * - the account has an identity and secret storage holds its keys (a new device, a lost
 *   store): the keys are imported and the device signs itself — the same identity, so
 *   nobody sees a change;
 * - the account has none (or `reset`): a new identity is made, saved in the device's
 *   store and in secret storage before its public keys are uploaded (with the access
 *   token alone where the homeserver allows a first upload, else with the password).
 */
export async function setUpCrossSigning(options: CrossSigningOptions): Promise<CrossSigningOutcome> {
  const { device, userId, deviceId, call, secrets, log } = options;
  return device.run(async (machine, save) => {
    await learnOwnKeys(machine, userId, call);
    const status = await machine.crossSigningStatus();
    const published = await hasOwnIdentity(machine, userId);
    const hasAll = status.hasMaster && status.hasSelfSigning && status.hasUserSigning;
    if (hasAll && published && !options.reset) {
      if (await signOwnDevice(machine, userId, deviceId, call))
        log.info({ deviceId }, "matrix: signed this device");
      if (secrets && (await secrets.get(NAMES.master)) === null) await storeKeys(machine, secrets);
      return "present";
    }
    if (published && !options.reset) {
      if (!secrets) throw new CrossSigningKeysUnavailableError(userId, "no recovery key is set");
      const [master, selfSigning, userSigning] = await Promise.all([
        secrets.get(NAMES.master),
        secrets.get(NAMES.selfSigning),
        secrets.get(NAMES.userSigning),
      ]);
      if (!master || !selfSigning || !userSigning) {
        throw new CrossSigningKeysUnavailableError(userId, "secret storage does not hold them");
      }
      const imported = await machine.importCrossSigningKeys(master, selfSigning, userSigning);
      if (!imported.hasMaster || !imported.hasSelfSigning || !imported.hasUserSigning) {
        throw new CrossSigningKeysUnavailableError(
          userId,
          "the keys in secret storage are not the published ones",
        );
      }
      await save();
      await signOwnDevice(machine, userId, deviceId, call);
      log.info(
        { deviceId },
        "matrix: cross-signing keys restored from secret storage; this device is signed",
      );
      return "restored";
    }
    const requests = await machine.bootstrapCrossSigning(true);
    // The private keys are safe (sealed in Redis, and in secret storage) before anyone sees their public halves.
    await save();
    if (secrets) await storeKeys(machine, secrets);
    const upload: unknown = requests.uploadKeysRequest;
    if (upload instanceof KeysUploadRequest) await sendMachineRequest(machine, upload, call);
    await postWithUserAuth(
      call,
      "/_matrix/client/v3/keys/device_signing/upload",
      JSON.parse(requests.uploadSigningKeysRequest.body) as Record<string, unknown>,
      options.auth,
      "publish the bot's cross-signing keys",
    );
    const signatures: SignatureUploadRequest = requests.uploadSignaturesRequest;
    await sendMachineRequest(machine, signatures, call);
    await learnOwnKeys(machine, userId, call);
    log.warn(
      { deviceId, reset: options.reset === true },
      secrets
        ? "matrix: created the bot's cross-signing identity and signed this device; its keys are in secret storage"
        : "matrix: created the bot's cross-signing identity and signed this device; without matrix.recoveryKey its " +
            "keys are only in this device's store: if the store is lost, so is the identity",
    );
    return "created";
  });
}
