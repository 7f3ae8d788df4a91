import { CollectStrategy, RoomId, UserId } from "@matrix-org/matrix-sdk-crypto-wasm";
import type { E2eePeer } from "./matrix-e2ee-peer.js";
import type { MatrixHomeserverStandin } from "./matrix-homeserver-standin.js";

/**
 * What an Element client with history sharing does before it invites someone into an
 * encrypted room (MSC4268, matrix-js-sdk's `shareRoomHistoryWithUser`): it encrypts the
 * room keys it holds into a bundle, uploads it, and sends the bundle's details to the
 * invitee's cross-signed devices. Returns the bundle's mxc URI (none when it held no keys).
 */
export async function shareHistory(
  hs: MatrixHomeserverStandin,
  peer: E2eePeer,
  roomId: string,
  invitee: string,
): Promise<string | undefined> {
  const bundle = await peer.machine.buildRoomKeyBundle(new RoomId(roomId));
  if (!bundle) return undefined;
  const url = hs.upload(Buffer.from(bundle.encryptedData), "application/octet-stream");
  await peer.machine.updateTrackedUsers([new UserId(invitee)]);
  await peer.learn(invitee);
  const claim = await peer.machine.getMissingSessions([new UserId(invitee)]);
  if (claim) await peer.sendOutgoing(claim);
  const requests = await peer.machine.shareRoomKeyBundleData(
    new UserId(invitee),
    new RoomId(roomId),
    url,
    bundle.mediaEncryptionInfo,
    CollectStrategy.identityBasedStrategy(),
  );
  for (const request of requests) await peer.sendOutgoing(request);
  return url;
}
