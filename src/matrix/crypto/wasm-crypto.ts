import {
  DecryptionErrorCode,
  DeviceLists,
  initAsync,
  MegolmDecryptionError,
  UserId,
} from "@matrix-org/matrix-sdk-crypto-wasm";
import { z } from "zod";

let wasmReady: Promise<void> | undefined;

/** Loads the crypto WebAssembly once per process. */
export function loadCrypto(): Promise<void> {
  wasmReady ??= initAsync();
  return wasmReady;
}

/** What the wasm bindings threw, as an Error with a message (their errors can lack one). */
export function wasmError(err: unknown): Error {
  if (err instanceof Error && typeof err.message === "string" && err.message !== "") return err;
  const description = (err as { description?: unknown } | null)?.description;
  return new Error(String(description ?? err), { cause: err });
}

/**
 * Why the machine could not decrypt: the key is missing, known only from a later index,
 * the sender's device is not one the trust mode accepts (unknown, not cross-signed, or
 * its verified owner changed identity), or anything else.
 */
export function decryptionFailure(
  err: unknown,
): "missing-key" | "unknown-index" | "untrusted-device" | "other" {
  if (!(err instanceof MegolmDecryptionError)) return "other";
  switch (err.code) {
    case DecryptionErrorCode.MissingRoomKey:
      return "missing-key";
    case DecryptionErrorCode.UnknownMessageIndex:
      return "unknown-index";
    case DecryptionErrorCode.UnknownSenderDevice:
    case DecryptionErrorCode.UnsignedSenderDevice:
    case DecryptionErrorCode.SenderIdentityVerificationViolation:
      return "untrusted-device";
    default:
      return "other";
  }
}

/** The parts of a sync response the crypto machine needs. */
const SyncCryptoSchema = z.looseObject({
  to_device: z.looseObject({ events: z.array(z.unknown()).default([]) }).optional(),
  device_lists: z
    .looseObject({ changed: z.array(z.string()).default([]), left: z.array(z.string()).default([]) })
    .optional(),
  device_one_time_keys_count: z.record(z.string(), z.number()).optional(),
  device_unused_fallback_key_types: z.array(z.string()).optional(),
  "org.matrix.msc2732.device_unused_fallback_key_types": z.array(z.string()).optional(),
});

/** A sync response's crypto parts in the machine's argument types (`receiveSyncChanges`). */
export interface SyncCryptoParts {
  toDevice: string;
  lists: DeviceLists;
  keyCounts: Map<string, number>;
  fallbackKeys: Set<string> | undefined;
  /** Whether anything in them can change the store (messages or device-list changes). */
  changes: boolean;
}

/** Reads the crypto parts of a sync response. */
export function syncCryptoParts(raw: unknown): SyncCryptoParts {
  const sync = SyncCryptoSchema.parse(raw ?? {});
  const toDevice = sync.to_device?.events ?? [];
  const changed = sync.device_lists?.changed ?? [];
  const left = sync.device_lists?.left ?? [];
  const fallback =
    sync.device_unused_fallback_key_types ?? sync["org.matrix.msc2732.device_unused_fallback_key_types"];
  return {
    toDevice: JSON.stringify(toDevice),
    lists: new DeviceLists(
      changed.map((u) => new UserId(u)),
      left.map((u) => new UserId(u)),
    ),
    keyCounts: new Map(Object.entries(sync.device_one_time_keys_count ?? {})),
    fallbackKeys: fallback ? new Set(fallback) : undefined,
    changes: toDevice.length + changed.length + left.length > 0,
  };
}
