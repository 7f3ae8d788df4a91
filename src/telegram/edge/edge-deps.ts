import type { Inbox } from "../../core/adapter.js";
import type { Logger } from "../../core/log.js";
import type { FloodGate } from "../../scheduler/flood-gate.js";
import type { OrderedReads } from "../../edge/ordered-reads.js";
import type { PairingGate } from "../../access/pairing-gate.js";
import type { StrangerGate } from "../../edge/stranger-gate.js";
import type { Keys } from "../../sessions/keys.js";
import type { ChatMigrations } from "../chat-migrations.js";
import type { BotIdentity } from "../edge-record.js";
import type { TopicLobby } from "../topic-lobby.js";
import type { ReadDocument } from "../update-normalizer.js";

/** What the steps of one bot's Telegram edge read besides the update (`ctx.deps`). */
export interface EdgeDeps {
  identity: BotIdentity;
  inbox: Inbox;
  keys: Keys;
  flood: FloodGate;
  log: Logger;
  /** One notice an hour for a stranger or an unbound chat, shared by the steps that give one. */
  strangers: StrangerGate;
  readDocument: ReadDocument;
  /** Document reads in flight, off the update's path. */
  reads: OrderedReads<number>;
  /** Groups the bot saw migrate to a supergroup; the identity's aliases read the same record. */
  migrations?: ChatMigrations;
  /** `/pair <code>`, taken before the allowlist. */
  pairing?: PairingGate;
  /** Answers the General of a chat with topics, and topics whose agent is gone. */
  lobby?: TopicLobby;
}
