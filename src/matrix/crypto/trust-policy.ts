import {
  CollectStrategy,
  OtherUserIdentity,
  TrustRequirement,
  UserId,
  type OlmMachine,
} from "@matrix-org/matrix-sdk-crypto-wasm";

/**
 * Whom the bot trusts in encrypted rooms (`matrix.trust`):
 * - `cross-signed`: what Element does when it excludes insecure devices (MSC4153): room
 *   keys only for devices their owner cross-signed, messages read only from such devices;
 * - `tofu`: every device of a person, as Element's default does;
 * - `all`: like `tofu`, and a changed identity is only logged (legacy setups).
 * In `cross-signed` and `tofu` each person's identity (master key) is pinned the first
 * time the bot sees it; when it changes the bot stops answering that person in
 * encrypted rooms until the operator re-pins it (`roomgate matrix trust <user>`).
 */
export type TrustMode = "cross-signed" | "tofu" | "all";

/** The crypto machine's sharing strategy for the bot's room keys. */
export function sharingStrategy(trust: TrustMode): CollectStrategy {
  return trust === "cross-signed" ? CollectStrategy.identityBasedStrategy() : CollectStrategy.allDevices();
}

/** The trust the machine requires of a sender's device to decrypt its messages. */
export function senderRequirement(trust: TrustMode): TrustRequirement {
  // "OrLegacy": room keys received before trust was recorded (a store from before) still decrypt, as in Element.
  return trust === "cross-signed" ? TrustRequirement.CrossSignedOrLegacy : TrustRequirement.Untrusted;
}

/** The public master key (base64) in the machine's JSON of a cross-signing key. */
function masterPublicKey(json: string): string {
  const keys = (JSON.parse(json) as { keys?: Record<string, string> }).keys ?? {};
  return Object.values(keys)[0] ?? "";
}

/**
 * When a person's identity changed since the bot pinned it (or since it was verified),
 * so they are refused: their new master key (public, base64). The identity object is
 * freed at once: it holds the machine's store open, and a store left open cannot be
 * deleted when the device closes.
 */
export async function identityChange(machine: OlmMachine, userId: string): Promise<string | undefined> {
  const identity = await machine.getIdentity(new UserId(userId));
  try {
    if (!(identity instanceof OtherUserIdentity)) return undefined;
    if (!identity.identityNeedsUserApproval() && !identity.hasVerificationViolation()) return undefined;
    return masterPublicKey(identity.masterKey);
  } finally {
    identity?.free();
  }
}

/** Pins a person's current identity, when its master key is `masterKey` (what the operator approved); true when done. */
export async function pinIdentity(machine: OlmMachine, userId: string, masterKey: string): Promise<boolean> {
  const identity = await machine.getIdentity(new UserId(userId));
  try {
    if (!(identity instanceof OtherUserIdentity) || masterPublicKey(identity.masterKey) !== masterKey)
      return false;
    await identity.pinCurrentMasterKey();
    if (identity.hasVerificationViolation()) await identity.withdrawVerification();
    return true;
  } finally {
    identity?.free();
  }
}
