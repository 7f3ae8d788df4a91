import {
  KeysBackupRequest,
  KeysClaimRequest,
  KeysQueryRequest,
  KeysUploadRequest,
  SignatureUploadRequest,
  ToDeviceRequest,
  type OlmMachine,
} from "@matrix-org/matrix-sdk-crypto-wasm";
import { z } from "zod";

/** A homeserver call: method, path under the homeserver, JSON body; resolves to the JSON answer. */
export type HomeserverCall = (
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body: unknown,
) => Promise<unknown>;

/** Any request the crypto machine asks to be sent, or makes on demand. */
export type MachineRequest =
  Awaited<ReturnType<OlmMachine["outgoingRequests"]>>[number] | KeysBackupRequest | SignatureUploadRequest;

const C = "/_matrix/client/v3";

/**
 * Sends one of the machine's requests to the homeserver and reports the answer back
 * (`markRequestAsSent`), which is what lets the machine move on (keys uploaded,
 * devices learnt, sessions claimed, room keys delivered, backed up). Returns false for
 * request kinds sent elsewhere (in-room verification messages go through the room's
 * encryption), which are left.
 */
export async function sendMachineRequest(
  machine: OlmMachine,
  request: MachineRequest,
  call: HomeserverCall,
): Promise<boolean> {
  let answer: unknown;
  if (request instanceof KeysUploadRequest) {
    answer = await call("POST", `${C}/keys/upload`, JSON.parse(request.body));
  } else if (request instanceof KeysQueryRequest) {
    answer = await call("POST", `${C}/keys/query`, JSON.parse(request.body));
  } else if (request instanceof KeysClaimRequest) {
    answer = await call("POST", `${C}/keys/claim`, JSON.parse(request.body));
  } else if (request instanceof ToDeviceRequest) {
    const path = `${C}/sendToDevice/${encodeURIComponent(request.event_type)}/${encodeURIComponent(request.txn_id)}`;
    answer = await call("PUT", path, JSON.parse(request.body));
  } else if (request instanceof SignatureUploadRequest) {
    answer = await call("POST", `${C}/keys/signatures/upload`, JSON.parse(request.body));
  } else if (request instanceof KeysBackupRequest) {
    const path = `${C}/room_keys/keys?version=${encodeURIComponent(request.version)}`;
    answer = await call("PUT", path, JSON.parse(request.body));
  } else {
    return false;
  }
  // Requests the machine made on demand (a bootstrap's signatures) carry no id and are not tracked.
  if (request.id) await machine.markRequestAsSent(request.id, request.type, JSON.stringify(answer ?? {}));
  return true;
}

const KeysQueryAnswerSchema = z.looseObject({
  device_keys: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
});

/** Whether the homeserver publishes keys for this device: it was set up before, by someone. */
export async function deviceHasKeys(
  call: HomeserverCall,
  userId: string,
  deviceId: string,
): Promise<boolean> {
  const answer = KeysQueryAnswerSchema.parse(
    await call("POST", `${C}/keys/query`, { device_keys: { [userId]: [deviceId] } }),
  );
  return answer.device_keys[userId]?.[deviceId] !== undefined;
}
