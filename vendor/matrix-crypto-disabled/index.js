"use strict";
// roomgate does not support end-to-end encryption yet: the real binding downloads a
// native binary at install time, which cannot happen on an offline machine. Every
// name matrix-bot-sdk reads is present so that importing the SDK works; using any
// of them means encryption was switched on, and that must fail loudly.
class CryptoUnavailableError extends Error {
  constructor(name) {
    super(`Matrix end-to-end encryption is not available in this build (${name} was used)`);
    this.name = "CryptoUnavailableError";
  }
}
function unavailable(name) {
  return class {
    constructor() {
      throw new CryptoUnavailableError(name);
    }
    static [Symbol.hasInstance]() {
      return false;
    }
  };
}
const names = [
  "Attachment",
  "DeviceId",
  "DeviceLists",
  "EncryptedAttachment",
  "EncryptionSettings",
  "OlmMachine",
  "RoomId",
  "UserId",
  "StoreType",
  "RequestType",
  "HistoryVisibility",
  "EncryptionAlgorithm",
];
for (const name of names) module.exports[name] = unavailable(name);
module.exports.CryptoUnavailableError = CryptoUnavailableError;
