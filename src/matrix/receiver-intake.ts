import type { MatrixClient } from "matrix-bot-sdk";
import type { PairingGate } from "../access/pairing-gate.js";
import type { Inbox } from "../core/adapter.js";
import type { EditsConfig, MatrixConfig } from "../core/config.js";
import type { Logger } from "../core/log.js";
import type { OutageNoticeOptions } from "../edge/outage-notices.js";
import type { FloodGate } from "../scheduler/flood-gate.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Keys } from "../sessions/keys.js";
import type { MatrixE2ee } from "./crypto/matrix-e2ee.js";
import { MatrixIntake } from "./edge/matrix-intake.js";
import type { EdgeNotices } from "./edge-notices.js";
import { EditReview } from "./edit-review.js";
import type { EncryptionPolicy } from "./encryption-policy.js";
import { InboundBuilder } from "./inbound-builder.js";
import { MediaReader } from "./media-reader.js";
import { MentionGate } from "./mention-gate.js";
import { MatrixOutageNotices } from "./outage-notices.js";
import type { RoomLevels } from "./room-levels.js";
import type { RoomBinding } from "./room-policy.js";

/** What the Matrix receiver needs from the runtime. */
export interface MatrixReceiverOptions {
  config: MatrixConfig;
  maxFileBytes: number;
  /** Longest a file download may take. */
  fileTimeoutMs?: number;
  /** Inbound flood control; without it nothing is limited. */
  flood?: FloodGate;
  redis: RedisClient;
  keys: Keys;
  inbox: Inbox;
  log: Logger;
  /** Long-poll timeout of each sync request. */
  syncTimeoutMs?: number;
  /** What an edited message does (default: logged, not asked again). */
  edits?: EditsConfig;
  /** Users `/pair` added to the rooms' bindings. */
  paired?: (binding: string, senderId: string) => boolean;
  /** `/pair <code>`, taken at the edge before the allowlist. */
  pairing?: PairingGate;
  /** The account's E2EE parts, shared with the sender; without it the receiver makes its own. */
  e2ee?: MatrixE2ee;
  /** When people are told that their message could not be queued. */
  notices?: OutageNoticeOptions;
}

/** The receiver's parts, made at its start, that the intake shares. */
export interface ReceiverParts {
  api: MatrixClient;
  botUserId: string;
  bindings: ReadonlyMap<string, RoomBinding>;
  policy: EncryptionPolicy;
  levels: RoomLevels;
  notices: EdgeNotices;
}

/**
 * The Matrix edge as the receiver runs it: its steps' parts (file reads, the mention
 * gate with the bot's display name learnt, edits, the event builder, outage notices).
 */
export async function receiverIntake(
  options: MatrixReceiverOptions,
  parts: ReceiverParts,
): Promise<MatrixIntake> {
  const { config, log, inbox, flood, pairing, paired, maxFileBytes } = options;
  const { api, botUserId, notices, policy } = parts;
  const media = new MediaReader(
    config.homeserver,
    config.accessToken,
    maxFileBytes,
    options.fileTimeoutMs ?? 20_000,
    log,
  );
  const gate = new MentionGate(api, botUserId, log);
  await gate.learnName();
  return new MatrixIntake({
    botUserId,
    bindings: parts.bindings,
    policy,
    levels: parts.levels,
    maxFileBytes,
    notices,
    outage: new MatrixOutageNotices(notices, policy, log, options.notices),
    gate,
    edits: new EditReview(api, options.edits ?? { reask: false, windowSeconds: 120 }, log),
    builder: new InboundBuilder(api, botUserId, media, log),
    inbox,
    log,
    ...(flood ? { flood } : {}),
    ...(pairing ? { pairing } : {}),
    ...(paired ? { paired } : {}),
  });
}
