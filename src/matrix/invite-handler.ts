import type { MatrixClient } from "matrix-bot-sdk";
import type { Logger } from "../core/log.js";
import { withMatrixRetry } from "./matrix-retry.js";
import { mayInvite } from "../access/rules.js";
import type { RoomBinding } from "./room-policy.js";

/**
 * Answers an invite: joined when the room is configured and the inviter may bring the
 * bot in (room-policy.ts), declined otherwise. Resolves to the inviter when joined.
 */
export async function answerInvite(
  api: MatrixClient,
  binding: RoomBinding | undefined,
  roomId: string,
  raw: unknown,
  log: Logger,
): Promise<string | undefined> {
  const inviter = (raw as { sender?: unknown } | null)?.sender;
  if (typeof inviter !== "string") return undefined;
  const inviteLog = log.child({ roomId, inviter });
  if (!mayInvite(binding, inviter)) {
    inviteLog.warn(
      binding
        ? "invite from a user who may not invite the bot; declined"
        : "invite to an unconfigured room; declined",
    );
    await withMatrixRetry("decline invite", () => api.leaveRoom(roomId), inviteLog).catch((err: unknown) =>
      inviteLog.warn({ err }, "could not decline the invite"),
    );
    return undefined;
  }
  await withMatrixRetry("join", () => api.joinRoom(roomId), inviteLog);
  inviteLog.info("joined configured room on invite");
  return inviter;
}
