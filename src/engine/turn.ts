import type { InboundEvent } from "../core/event.js";
import type { Attachment } from "../core/attachment.js";
import type { Block, ReplyOption, TurnOutcome } from "../core/reply.js";
import type { Logger } from "../core/log.js";
import type { NamespaceClient } from "../namespace/namespace-client.js";
import type { HistoryEntry, Session } from "../sessions/session.js";
import { quietChannel, type TurnChannel } from "./turn-channel.js";

/** Settings a turn needs from the configuration. */
export interface TurnSettings {
  maxMessageChars: number;
  choiceSeconds: number;
  /** How long a tool waits for a missing argument before the slot expires (default 15 min). */
  slotSeconds?: number;
}

/** What a finished turn changes: the outcome to deliver and the session state to commit. */
export interface TurnResult {
  outcome: TurnOutcome;
  session: Session;
  append: HistoryEntry[];
  resetHistory: boolean;
}

/**
 * One turn in progress: the event, a working copy of the room's session, and the
 * reply being built. Steps add blocks and options; `result()` freezes it.
 */
export class Turn {
  readonly blocks: Block[] = [];
  private readonly attachments: Attachment[] = [];
  options: ReplyOption[] = [];
  offerId: string | undefined;
  toast: string | undefined;
  chosen: TurnOutcome["chosen"];
  resetHistory = false;
  private readonly append: HistoryEntry[] = [];
  /** Whether the person was answered at all; a silent turn delivers nothing. */
  private replied = false;

  constructor(
    readonly event: InboundEvent,
    public session: Session,
    readonly history: HistoryEntry[],
    readonly namespace: NamespaceClient,
    readonly settings: TurnSettings,
    readonly log: Logger,
    readonly channel: TurnChannel = quietChannel,
  ) {}

  /** The bot's own words, shown verbatim. */
  say(text: string): void {
    this.blocks.push({ type: "text", text });
    this.replied = true;
  }

  /** Blocks from a namespace (an Answer or a tool's text). */
  show(blocks: Block[]): void {
    this.blocks.push(...blocks);
    this.replied = true;
  }

  /** Files to send after the reply's text (a tool's images, audio, blobs, long output). */
  attach(attachments: Attachment[]): void {
    this.attachments.push(...attachments);
    if (attachments.length > 0) this.replied = true;
  }

  /** Records what the person said, for `context`/`history` arguments of later turns. */
  remember(role: HistoryEntry["role"], text: string): void {
    this.append.push({ role, text, at: Date.now() });
  }

  /** The outcome and state to commit. */
  result(): TurnResult {
    this.session.updatedAt = Date.now();
    this.session.turns += 1;
    const reply = this.replied
      ? {
          blocks: this.blocks,
          options: this.options,
          ...(this.offerId ? { offerId: this.offerId } : {}),
          ...(this.attachments.length > 0 ? { attachments: this.attachments } : {}),
        }
      : null;
    return {
      outcome: {
        reply,
        ...(this.toast !== undefined ? { toast: this.toast } : {}),
        ...(this.chosen ? { chosen: this.chosen } : {}),
      },
      session: this.session,
      append: this.append,
      resetHistory: this.resetHistory,
    };
  }
}
