import {
  EncryptionAlgorithm,
  EncryptionSettings,
  HistoryVisibility,
} from "@matrix-org/matrix-sdk-crypto-wasm";
import { z } from "zod";
import { sharingStrategy, type TrustMode } from "./trust-policy.js";

/** The only room algorithm the bot encrypts with (the spec's Megolm). */
export const MEGOLM = "m.megolm.v1.aes-sha2";

/** The spec's defaults when `m.room.encryption` does not say: one week, 100 messages. */
const DEFAULT_ROTATION_MS = 604_800_000;
const DEFAULT_ROTATION_MSGS = 100;

/** The content of `m.room.encryption`, parsed where it arrives. */
export const RoomEncryptionContentSchema = z.looseObject({
  algorithm: z.string(),
  rotation_period_ms: z.number().positive().optional(),
  rotation_period_msgs: z.number().int().positive().optional(),
});

/** How a room wants its messages encrypted, from its `m.room.encryption` and history visibility. */
export interface RoomCryptoSettings {
  algorithm: string;
  rotationPeriodMs: number;
  rotationPeriodMessages: number;
  historyVisibility: string;
}

/** Reads a room's settings from its state contents; null when the encryption content is not valid. */
export function roomCryptoSettings(
  encryption: unknown,
  historyVisibility: string | undefined,
): RoomCryptoSettings | null {
  const parsed = RoomEncryptionContentSchema.safeParse(encryption);
  if (!parsed.success) return null;
  return {
    algorithm: parsed.data.algorithm,
    rotationPeriodMs: parsed.data.rotation_period_ms ?? DEFAULT_ROTATION_MS,
    rotationPeriodMessages: parsed.data.rotation_period_msgs ?? DEFAULT_ROTATION_MSGS,
    historyVisibility: historyVisibility ?? "shared",
  };
}

const VISIBILITY: Record<string, HistoryVisibility> = {
  invited: HistoryVisibility.Invited,
  joined: HistoryVisibility.Joined,
  shared: HistoryVisibility.Shared,
  world_readable: HistoryVisibility.WorldReadable,
};

/**
 * The crypto machine's settings for the bot's outbound session in a room: Megolm, the
 * room's rotation (the room gives milliseconds, the machine takes microseconds), and
 * keys for the recipients' devices that `trust` allows (trust-policy.ts).
 */
export function encryptionSettings(room: RoomCryptoSettings, trust: TrustMode): EncryptionSettings {
  const settings = new EncryptionSettings();
  settings.algorithm = EncryptionAlgorithm.MegolmV1AesSha2;
  settings.rotationPeriod = BigInt(Math.round(room.rotationPeriodMs)) * 1000n;
  settings.rotationPeriodMessages = BigInt(room.rotationPeriodMessages);
  settings.historyVisibility = VISIBILITY[room.historyVisibility] ?? HistoryVisibility.Shared;
  settings.sharingStrategy = sharingStrategy(trust);
  return settings;
}
