import { Composer, type Api } from "grammy";
import type { Update, UserFromGetMe } from "grammy/types";
import type { Inbox } from "../../core/adapter.js";
import type { Logger } from "../../core/log.js";
import type { FloodGate } from "../../scheduler/flood-gate.js";
import { OrderedReads } from "../../edge/ordered-reads.js";
import type { PairingGate } from "../../access/pairing-gate.js";
import { StrangerGate } from "../../edge/stranger-gate.js";
import type { Keys } from "../../sessions/keys.js";
import type { RedisClient } from "../../sessions/redis-connection.js";
import type { ChatMigrations } from "../chat-migrations.js";
import type { DocumentReader } from "../document-reader.js";
import type { BotIdentity } from "../edge-record.js";
import type { TopicLobby } from "../topic-lobby.js";
import { binding } from "./binding.js";
import { document } from "./document.js";
import { EdgeContext } from "./edge-context.js";
import type { EdgeDeps } from "./edge-deps.js";
import { edit } from "./edit.js";
import { enqueue } from "./enqueue.js";
import { lobby } from "./lobby.js";
import { membership } from "./membership.js";
import { migration } from "./migration.js";
import { pageTurn } from "./page-turn.js";
import { pairing } from "./pairing.js";
import { spentPress } from "./spent-press.js";
import { stop } from "./stop.js";
import { stranger } from "./stranger.js";
import { topic } from "./topic.js";

/**
 * The Telegram edge, in order: each step handles the update (answers, refuses, queues
 * it) or hands it to the next. Until `binding` decides the edge record the steps read
 * the raw update; after it they read `ctx.seen`. Nothing before `enqueue` does I/O but
 * Redis notice keys and flood counts: a stranger gets at most one refusal an hour and
 * nothing is downloaded, queued or stored for them.
 */
const EDGE_STEPS = [
  stop,
  membership,
  edit,
  spentPress,
  migration,
  topic,
  binding,
  pairing,
  stranger,
  lobby,
  pageTurn,
  document,
  enqueue,
];

/** What the intake needs besides the bot: Redis for the edge's notices and limits. */
export interface IntakeDeps {
  inbox: Inbox;
  redis: RedisClient;
  keys: Keys;
  flood: FloodGate;
  log: Logger;
  /** Groups the bot saw migrate to a supergroup; the identity's aliases read the same record. */
  migrations?: ChatMigrations;
  /** `/pair <code>`, taken at the edge before the allowlist. */
  pairing?: PairingGate;
  /** Answers the General of a chat with topics, and topics whose agent is gone. */
  lobby?: TopicLobby;
}

/**
 * Where both receivers hand one bot's updates: the edge steps above as one grammY
 * Composer (adding a concern is one file and one line). `receive` throws when the
 * inbox cannot take an event, so that the update is not confirmed and arrives again.
 */
export class UpdateIntake {
  private readonly chain = new Composer<EdgeContext>(...EDGE_STEPS);
  private readonly deps: EdgeDeps;

  constructor(
    private readonly bot: { api: Api; botInfo: UserFromGetMe },
    readonly identity: BotIdentity,
    reader: DocumentReader,
    intake: IntakeDeps,
  ) {
    const { redis, migrations, pairing, lobby, ...rest } = intake;
    this.deps = {
      ...rest,
      identity,
      strangers: new StrangerGate(redis),
      readDocument: (doc) => reader.read(doc),
      reads: new OrderedReads<number>(),
      ...(migrations ? { migrations } : {}),
      ...(pairing ? { pairing } : {}),
      ...(lobby ? { lobby } : {}),
    };
  }

  /** Takes one update: enqueued, answered on the spot, refused, or ignored. */
  async receive(update: Update): Promise<void> {
    const ctx = new EdgeContext(update, this.bot.api, this.bot.botInfo, this.deps);
    await this.chain.middleware()(ctx, () => Promise.resolve());
  }

  /** Waits for the document reads in flight, so a stop does not lose one half-read. */
  async drain(): Promise<void> {
    await this.deps.reads.drain();
  }
}
