import { setTimeout as sleep } from "node:timers/promises";
import type { RedisClient } from "../../sessions/redis-connection.js";
import type { Logger } from "../../core/log.js";
import { matrixDeviceOwned } from "../../ops/metrics.js";
import type { Keys } from "../../sessions/keys.js";
import { CryptoDevice } from "./crypto-device.js";
import type { PinApprovals } from "./sender-trust.js";
import { CryptoStore } from "./crypto-store.js";
import type { DeviceIdentity } from "./device-identity.js";
import { DeviceLease } from "./device-lease.js";
import { DeviceScripts } from "./device-scripts.js";
import type { RoomKeyBundles } from "./key-bundles.js";
import type { HomeserverCall } from "./outgoing-requests.js";
import type { TrustMode } from "./trust-policy.js";
import type { Verifications } from "./verification.js";
import { loadCrypto } from "./wasm-crypto.js";

/** What the owner runs while it holds the device, and stops when it loses it. */
export interface OwnedDeviceHooks {
  /** The device is ours: start syncing and serving encrypted rooms. */
  owned(device: CryptoDevice): Promise<void>;
  /** The device is no longer ours (lease lost or stopping): stop before anything else is written. */
  lost(): Promise<void>;
}

/** What owning the device needs. */
export interface DeviceOwnerOptions {
  redis: RedisClient;
  keys: Keys;
  userId: string;
  deviceId: string;
  storeKey: string;
  leaseMs: number;
  call: HomeserverCall;
  log: Logger;
  /** Whose devices the device trusts (matrix.trust). */
  trust?: TrustMode;
  /** Cross-signs each device this process opens and keeps its room keys backed up. */
  identity?: DeviceIdentity;
  /** Changed identities the operator approved. */
  approvals?: PinApprovals;
  /** Takes part in people's verifications of the bot while this process owns the device. */
  verifications?: (device: CryptoDevice) => Verifications;
  /** Takes room-key bundles from inviters (MSC4268) while this process owns the device. */
  bundles?: (device: CryptoDevice) => RoomKeyBundles;
}

/** How long a process that could not open the device waits before trying again. */
const REOPEN_AFTER_MS = 30_000;

/**
 * One process at a time owns the bot's Matrix device. At start the process tries the
 * lease once: holding it, it opens the device from Redis (a store that is missing or
 * cannot be decrypted fails the start with its recovery) and runs `owned`; otherwise it
 * checks that the store opens with its key (a wrong key fails the start here too) and
 * stands by and keeps asking, several times per lease, so that when the owner dies its
 * lease runs out and this process takes the device within the lease plus one poll.
 */
export class DeviceOwner {
  readonly store: CryptoStore;
  private readonly lease: DeviceLease;
  private current: CryptoDevice | undefined;
  private verifying: Verifications | undefined;
  private bundling: RoomKeyBundles | undefined;
  private readonly halt = new AbortController();
  private loop: Promise<void> | undefined;
  private hooks: OwnedDeviceHooks | undefined;
  private lostSignal: (() => void) | undefined;
  private lostPromise: Promise<void> = Promise.resolve();

  constructor(private readonly options: DeviceOwnerOptions) {
    const scripts = new DeviceScripts(options.redis);
    this.store = new CryptoStore(
      options.redis,
      scripts,
      options.keys,
      options.userId,
      options.deviceId,
      options.storeKey,
    );
    this.lease = new DeviceLease(
      scripts,
      options.keys.matrixDevice(options.userId, options.deviceId, "lease"),
      { leaseMs: options.leaseMs, pollMs: Math.max(100, Math.min(1000, Math.round(options.leaseMs / 5))) },
      options.log,
    );
    this.lease.onLost(() => this.lostSignal?.());
  }

  /** The device while this process owns it. */
  get device(): CryptoDevice | undefined {
    return this.lease.isHeld ? this.current : undefined;
  }

  /** People's verifications of the bot, while this process owns the device (in-room events go here). */
  get verifications(): Verifications | undefined {
    return this.device ? this.verifying : undefined;
  }

  /** Room-key bundles from inviters, while this process owns the device. */
  get bundles(): RoomKeyBundles | undefined {
    return this.device ? this.bundling : undefined;
  }

  /** The current lease token, for fenced writes (the sync token). */
  get token(): string {
    return this.lease.token;
  }

  /**
   * Takes the device if it is free (resolving once `owned` ran) or starts standing by.
   * Opening the device's store at start is fatal when it fails: the error says how to recover.
   */
  async start(hooks: OwnedDeviceHooks): Promise<void> {
    this.hooks = hooks;
    const { deviceId, log } = this.options;
    if (await this.lease.tryAcquire()) {
      try {
        await this.serve();
      } catch (err) {
        await this.release();
        throw err;
      }
    } else {
      // Ready to take over fast: the wasm compiled and the store's key derived now.
      await Promise.all([loadCrypto(), this.store.verify()]);
      log.info({ deviceId }, "matrix: another process owns the device; standing by to take it over");
    }
    this.loop = this.standBy();
  }

  /** Stops owning: the hooks' `lost` runs, the device closes and the lease is released for a standby. */
  async stop(): Promise<void> {
    this.halt.abort();
    this.lostSignal?.();
    await this.loop;
    await this.release();
  }

  private async serve(): Promise<void> {
    const { userId, deviceId, call, log } = this.options;
    const device = await CryptoDevice.open({
      userId,
      deviceId,
      store: this.store,
      leaseToken: () => this.lease.token,
      call,
      log,
      ...(this.options.trust ? { trust: this.options.trust } : {}),
      ...(this.options.approvals ? { approvals: this.options.approvals } : {}),
    });
    try {
      await this.options.identity?.attach(device);
    } catch (err) {
      await device.close();
      throw err;
    }
    this.current = device;
    this.verifying = this.options.verifications?.(device);
    this.bundling = this.options.bundles?.(device);
    // Rooms joined before the last owner stopped may still wait for their inviter's bundle.
    await this.bundling
      ?.resume()
      .catch((err: unknown) => log.warn({ err }, "matrix: waiting room-key bundles could not be looked at"));
    matrixDeviceOwned.set(1);
    this.lostPromise = new Promise<void>((resolve) => (this.lostSignal = resolve));
    log.info({ deviceId, ed25519: device.identityKeys.ed25519 }, "matrix: this process owns the device");
    await this.hooks?.owned(device);
  }

  /** Holds the device until it is lost, then asks for it again; until stopped. */
  private async standBy(): Promise<void> {
    const signal = this.halt.signal;
    while (!signal.aborted) {
      if (this.current) {
        await this.lostPromise;
        await this.release();
        continue;
      }
      if (!(await this.lease.acquire(signal))) break;
      try {
        await this.serve();
      } catch (err) {
        this.options.log.error(
          { err },
          "matrix: could not open the device after taking it over; trying again later",
        );
        await this.release();
        await sleep(REOPEN_AFTER_MS, undefined, { signal }).catch(() => undefined);
      }
    }
  }

  private async release(): Promise<void> {
    const device = this.current;
    this.current = undefined;
    this.verifying?.stop();
    this.verifying = undefined;
    this.bundling = undefined;
    this.lease.stopRenewing();
    matrixDeviceOwned.set(0);
    if (device) {
      await this.hooks
        ?.lost()
        .catch((err: unknown) =>
          this.options.log.warn({ err }, "matrix: stopping after losing the device failed"),
        );
      await device.close().catch(() => undefined);
    }
    await this.lease.release();
  }
}
