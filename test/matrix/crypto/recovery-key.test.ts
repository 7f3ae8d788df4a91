import {
  decodeRecoveryKey as jsDecode,
  encodeRecoveryKey as jsEncode,
} from "matrix-js-sdk/lib/crypto-api/recovery-key.js";
import { describe, expect, it } from "vitest";
import {
  decodeRecoveryKey,
  encodeRecoveryKey,
  InvalidRecoveryKeyError,
  newRecoveryKey,
} from "../../../src/matrix/crypto/recovery-key.js";

/** The recovery key's text form: the spec's "Cryptographic key representation" (base58, 0x8B 0x01, parity). */
describe("recovery key format", () => {
  it("encodes a key as matrix-js-sdk's test data shows it (BACKUP_DECRYPTION_KEY_BASE58)", () => {
    const key = Buffer.from("dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=", "base64");
    const text = "EsTc LW2K PGiF wKEA 3As5 g5c4 BXwk qeeJ ZJV8 Q9fu gUMN UE4d";
    expect(encodeRecoveryKey(key)).toBe(text);
    expect(Buffer.from(decodeRecoveryKey(text))).toEqual(key);
  });

  it("decodes matrix-rust-sdk's vector, whitespace anywhere", () => {
    const decoded = [
      159, 189, 70, 187, 52, 81, 113, 198, 246, 2, 44, 154, 37, 213, 104, 27, 165, 78, 236, 106, 108, 73, 83,
      243, 173, 192, 185, 110, 157, 145, 173, 163,
    ];
    const text = "EsT           pRvZTnjck8    YrhRAtw XLS84Nr2r9S9LGAWDaExVAPBvLRK   ";
    expect([...decodeRecoveryKey(text)]).toEqual(decoded);
  });

  it.each([
    ["a wrong check byte", "EsTpRvZTnjck8YrhRAtwXLS84Nr2r9S9LGAWDaExVAPBvLRk", "check byte"],
    ["a wrong prefix", "AATpRvZTnjck8YrhRAtwXLS84Nr2r9S9LGAWDaExVAPBvLRk", "prefix"],
    ["a wrong length", "AATpRvZTnjck8YrhRAtwXLS84Nr2r9S9", "length"],
    ["characters outside base58", "AATpRvZTnjck8YrhRAtwXLS84Nr0OIl", "base58"],
  ])("refuses %s, saying so without repeating the key", (_what, text, reason) => {
    let error: unknown;
    try {
      decodeRecoveryKey(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidRecoveryKeyError);
    expect((error as Error).message).toContain(reason);
    expect((error as Error).message).not.toContain(text.slice(4, 20));
  });

  it("prints new keys as 12 groups of 4 characters that matrix-js-sdk reads back, and the other way", () => {
    for (let i = 0; i < 20; i++) {
      const key = newRecoveryKey();
      const text = encodeRecoveryKey(key);
      expect(text).toMatch(/^([1-9A-HJ-NP-Za-km-z]{4} ){11}[1-9A-HJ-NP-Za-km-z]{4}$/);
      expect(jsDecode(text)).toEqual(key);
      expect(encodeRecoveryKey(key)).toBe(jsEncode(key));
    }
  });
});
