import { UserId } from "@matrix-org/matrix-sdk-crypto-wasm";
import type { Config } from "../../core/config.js";
import { ConfigError, RoomgateError } from "../../core/errors.js";
import { CryptoDevice } from "../../matrix/crypto/crypto-device.js";
import { CryptoStore } from "../../matrix/crypto/crypto-store.js";
import { DeviceIdentity } from "../../matrix/crypto/device-identity.js";
import { DeviceLease } from "../../matrix/crypto/device-lease.js";
import { DeviceScripts } from "../../matrix/crypto/device-scripts.js";
import { sendMachineRequest } from "../../matrix/crypto/outgoing-requests.js";
import { decodeRecoveryKey, encodeRecoveryKey, newRecoveryKey } from "../../matrix/crypto/recovery-key.js";
import { AccountData, SecretStorage } from "../../matrix/crypto/secret-storage.js";
import { askHidden } from "./prompt.js";
import { withMatrixCli, type MatrixCliContext } from "./matrix-cli.js";

/** What `roomgate matrix setup` was asked to do. */
export interface MatrixSetupOptions {
  config: Config;
  /** Replace the account's cross-signing identity and recovery key. */
  reset?: boolean;
  out?: NodeJS.WritableStream;
  /** Asks the operator for the account password (default: on the terminal, hidden). */
  askPassword?: () => Promise<string | undefined>;
}

/** Whether the device holds the account's private keys, and whether the account has an identity at all. */
async function identityState(
  device: CryptoDevice,
  ctx: MatrixCliContext,
): Promise<{ local: boolean; published: boolean }> {
  return device.run(async (machine) => {
    await sendMachineRequest(machine, machine.queryKeysForUsers([new UserId(ctx.userId)]), ctx.call);
    const status = await machine.crossSigningStatus();
    const identity = await machine.getIdentity(new UserId(ctx.userId));
    identity?.free();
    return {
      local: status.hasMaster && status.hasSelfSigning && status.hasUserSigning,
      published: identity !== undefined,
    };
  });
}

/**
 * `roomgate matrix setup`: sets the bot's device up in the foreground, the way a start
 * would, for the operator watching: its cross-signing identity (asking for the account
 * password where the homeserver wants it), secret storage under a recovery key and the
 * key backup. A new recovery key is printed once; with a MATRIX_RECOVERY_KEY that opens
 * the account's storage nothing new is made. It holds the device's lease while it
 * works, so no roomgate process may own the device meanwhile.
 */
export async function runMatrixSetup(options: MatrixSetupOptions): Promise<number> {
  const out = options.out ?? process.stdout;
  const reset = options.reset === true;
  return withMatrixCli(options.config, async (ctx) => {
    const { matrix, redis, keys, userId, deviceId, call, log } = ctx;
    if (matrix.encryption === "off" || !matrix.storeKey) {
      throw new ConfigError("matrix setup needs encryption on and matrix.storeKey (MATRIX_STORE_KEY) set");
    }
    const scripts = new DeviceScripts(redis);
    const lease = new DeviceLease(
      scripts,
      keys.matrixDevice(userId, deviceId, "lease"),
      { leaseMs: Math.round(matrix.deviceLeaseSeconds * 1000), pollMs: 1000 },
      log,
    );
    if (!(await lease.tryAcquire())) {
      throw new RoomgateError(
        "a roomgate process owns the bot's device now: stop it and run `roomgate matrix setup` again " +
          "(or give it matrix.password and matrix.recoveryKey: it sets itself up at start)",
      );
    }
    try {
      const store = new CryptoStore(redis, scripts, keys, userId, deviceId, matrix.storeKey);
      const device = await CryptoDevice.open({
        userId,
        deviceId,
        store,
        leaseToken: () => lease.token,
        call,
        log,
      });
      try {
        const data = new AccountData(call, userId);
        // MATRIX_RECOVERY_KEY is used unless --reset: it must open the account's storage, if there is one.
        const given = matrix.recoveryKey && !reset ? decodeRecoveryKey(matrix.recoveryKey) : undefined;
        const existing = given ? await new SecretStorage(data, given, userId).defaultKey() : null;
        const state = await identityState(device, ctx);
        if (existing === null && !reset && state.published && !state.local) {
          throw new RoomgateError(
            `${userId} already has a cross-signing identity whose private keys this device does not have: set ` +
              "MATRIX_RECOVERY_KEY to the recovery key that holds them, or replace the identity with --reset " +
              "(people who verified the bot will see that it changed)",
          );
        }
        const key = given ?? newRecoveryKey();
        const secrets = new SecretStorage(data, key, userId);
        if (existing === null) await secrets.create();
        const password = async () => matrix.password ?? (await (options.askPassword ?? askPassword)());
        await new DeviceIdentity({
          userId,
          deviceId,
          call,
          secrets,
          auth: { userId, password },
          log,
          reset,
          strict: true,
        }).attach(device);
        out.write(
          given
            ? `The bot's device ${deviceId} is cross-signed and its keys are in secret storage under MATRIX_RECOVERY_KEY.\n`
            : [
                `The bot's device ${deviceId} is cross-signed. Its recovery key, shown this once:`,
                "",
                `  ${encodeRecoveryKey(key)}`,
                "",
                "Keep it with your other secrets and set it as MATRIX_RECOVERY_KEY (matrix.recoveryKey:",
                "${MATRIX_RECOVERY_KEY}): with it a new device of the bot (a lost store, a new login) keeps",
                "the same identity and reads the backed-up room keys.",
                "",
              ].join("\n"),
        );
        return 0;
      } finally {
        await device.close();
      }
    } finally {
      await lease.release();
    }
  });
}

async function askPassword(): Promise<string | undefined> {
  return askHidden("The homeserver asks for the bot account's password: ");
}
