import { createHash, randomBytes } from "node:crypto";
import type { RedisClient } from "./redis-connection.js";
import { z } from "zod";
import type { Keys } from "./keys.js";

/** How long a pairing code can be used. */
export const PAIRING_CODE_SECONDS = 3600;
/** Random bytes in a code: 80 bits, far beyond guessing at the allowed rate. */
const CODE_BYTES = 10;
/** Wrong codes one sender may try per window before they are refused without a look. */
export const PAIRING_FAILURES_ALLOWED = 5;
const FAILURE_WINDOW_SECONDS = 3600;

/** Crockford's base32: no I, L, O or U, so a code read aloud or retyped is not mistaken. */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** A pairing code as Redis keeps it: which binding it opens, by whom, until when. */
export const PairingCodeSchema = z.object({
  binding: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
  /** Who made it (the operator's login name), for the trail. */
  by: z.string(),
});
export type PairingCode = z.infer<typeof PairingCodeSchema>;

function encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** A code as typed, in the one form that is hashed: upper case, no separators, look-alikes mapped. */
export function normalizeCode(text: string): string {
  return text
    .toUpperCase()
    .replace(/[\s-]+/g, "")
    .replace(/O/g, "0")
    .replace(/[IL]/g, "1");
}

function hashOf(code: string): string {
  return createHash("sha256").update(normalizeCode(code)).digest("hex");
}

/**
 * One-time pairing codes (issue 16): `roomgate pair --binding NAME` makes one, a person
 * who sends `/pair <code>` to the bot is added to that binding's users. Only the code's
 * hash is stored, so reading Redis does not give a usable code; a code expires after an
 * hour and is used once (GETDEL); wrong codes are counted per sender.
 */
export class PairingCodes {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** A new code for `binding`, shown as four groups of four characters. */
  async create(binding: string, by: string, now = Date.now()): Promise<{ code: string; expiresAt: number }> {
    const code = encode(randomBytes(CODE_BYTES)).match(/.{4}/g)!.join("-");
    const record: PairingCode = { binding, createdAt: now, expiresAt: now + PAIRING_CODE_SECONDS * 1000, by };
    await this.redis.set(
      this.keys.pairingCode(hashOf(code)),
      JSON.stringify(record),
      "EX",
      PAIRING_CODE_SECONDS,
      "NX",
    );
    return { code, expiresAt: record.expiresAt };
  }

  /** What a code would open, without using it (so a code meant for another chat stays usable there). */
  async peek(code: string): Promise<PairingCode | undefined> {
    return this.parse(await this.redis.get(this.keys.pairingCode(hashOf(code))));
  }

  /** Uses a code: its record the first time, undefined for every later try (or an unknown code). */
  async use(code: string): Promise<PairingCode | undefined> {
    return this.parse(await this.redis.getdel(this.keys.pairingCode(hashOf(code))));
  }

  /** True while a sender has tried too many wrong codes. */
  async blocked(senderId: string): Promise<boolean> {
    return Number(await this.redis.get(this.keys.pairingFailures(senderId))) >= PAIRING_FAILURES_ALLOWED;
  }

  /** Counts a wrong code; the window starts with the first one. */
  async failed(senderId: string): Promise<void> {
    const key = this.keys.pairingFailures(senderId);
    await this.redis.multi().incr(key).expire(key, FAILURE_WINDOW_SECONDS, "NX").exec();
  }

  private parse(raw: string | null): PairingCode | undefined {
    if (raw === null) return undefined;
    try {
      return PairingCodeSchema.parse(JSON.parse(raw));
    } catch {
      return undefined;
    }
  }
}
