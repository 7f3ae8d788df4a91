import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../core/log.js";
import { LostCryptoStoreError, MismatchedCryptoStoreError } from "./crypto-errors.js";
import type { CryptoStore, LoadedStore } from "./crypto-store.js";
import { deleteDatabases, restoreDatabases, snapshotDatabases } from "./idb-snapshot.js";
import { deviceHasKeys, type HomeserverCall } from "./outgoing-requests.js";

/** How long dropping waits for the machine's in-memory database to be let go of. */
const DROP_WAIT_MS = 2000;

/** What the device's database needs. */
export interface DeviceDatabaseOptions {
  userId: string;
  deviceId: string;
  store: CryptoStore;
  /** The lease token every store write is fenced with. */
  leaseToken: () => string;
  call: HomeserverCall;
  log: Logger;
}

/** A device's public identity keys (base64). */
export interface IdentityKeys {
  curve25519: string;
  ed25519: string;
}

/**
 * The crypto machine's IndexedDB database for one opening of the device, and its
 * sealed copy in Redis (crypto-store.ts): restored from Redis before the machine opens
 * it, written back (fenced by the device lease) after every change, dropped on close.
 */
export class DeviceDatabase {
  private generation: number;

  private constructor(
    /** The IndexedDB name the machine stores under, unique to the opening. */
    readonly name: string,
    private readonly options: DeviceDatabaseOptions,
    /** What Redis held for the device, or null for a new device. */
    readonly loaded: LoadedStore | null,
  ) {
    this.generation = loaded?.meta.generation ?? 0;
  }

  /**
   * Restores the device's store from Redis when there is one (for this user and device),
   * or starts an empty one when the homeserver has no keys for this device id either.
   * Keys on the homeserver without a store is an error (LostCryptoStoreError), never a
   * silent new identity.
   */
  static async open(options: DeviceDatabaseOptions): Promise<DeviceDatabase> {
    const { userId, deviceId, store } = options;
    const loaded = await store.load();
    if (loaded) {
      if (loaded.meta.userId !== userId || loaded.meta.deviceId !== deviceId) {
        throw new MismatchedCryptoStoreError(
          `matrix: the crypto store is for ${loaded.meta.deviceId} of ${loaded.meta.userId}, not ${deviceId} of ${userId}`,
        );
      }
    } else if (await deviceHasKeys(options.call, userId, deviceId)) {
      throw new LostCryptoStoreError(userId, deviceId);
    }
    // A name of its own: a process that lost the device and took it again, or a test
    // holding two devices, never shares a database with an earlier machine.
    const name = `roomgate-crypto-${randomUUID()}`;
    if (loaded) await restoreDatabases(loaded.snapshot, name);
    return new DeviceDatabase(name, options, loaded);
  }

  /** Checks that the machine opened with the identity keys the store recorded. */
  checkIdentity(keys: IdentityKeys): void {
    const meta = this.loaded?.meta;
    if (meta && (keys.curve25519 !== meta.curve25519 || keys.ed25519 !== meta.ed25519)) {
      throw new MismatchedCryptoStoreError(
        `matrix: the crypto store of ${this.options.deviceId} opened with other identity keys than it recorded`,
      );
    }
  }

  /** Seals what changed in the database and writes it to Redis, fenced by the lease. */
  async save(keys: IdentityKeys): Promise<void> {
    const started = performance.now();
    const snapshot = await snapshotDatabases(this.name);
    this.generation += 1;
    const { userId, deviceId, store, leaseToken, log } = this.options;
    const bytes = await store.save(
      leaseToken(),
      { userId, deviceId, ...keys, generation: this.generation, savedAt: Date.now() },
      snapshot,
    );
    log.debug(
      { bytes, ms: Math.round(performance.now() - started), generation: this.generation },
      "matrix: crypto store saved",
    );
  }

  /**
   * Drops the in-memory database once the closed machine lets go of it. A listener the
   * machine still runs (a cancelled verification's) can hold it open: then it is left,
   * a little memory, rather than the device's stop waiting for ever.
   */
  async drop(): Promise<void> {
    const dropped = await Promise.race([
      deleteDatabases(this.name).then(() => true),
      sleep(DROP_WAIT_MS).then(() => false),
    ]);
    if (!dropped)
      this.options.log.debug({ store: this.name }, "matrix: the closed machine's database was left");
  }
}
