import type { VoiceTool } from "../core/adapter.js";
import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import type { NamespaceClient } from "../namespace/namespace-client.js";
import type { HistoryEntry, Session } from "../sessions/session.js";
import { openAccess, type TurnAccess } from "./access.js";
import { applyToSession, type Change } from "./changes.js";
import type { RoomProactive } from "./room-proactive.js";
import { quietChannel, type TurnChannel } from "./turn-channel.js";

/** Settings a turn needs from the configuration. */
export interface TurnSettings {
  maxMessageChars: number;
  choiceSeconds: number;
  /** How long a tool waits for a missing argument before the slot expires (default 15 min). */
  slotSeconds?: number;
  /** How long a held call waits for its approvals (default 1 h). */
  approvalSeconds?: number;
  /** Files passed to tools: the most read, for how long, and the media types let through (`type/*`). */
  files?: { maxBytes: number; timeoutMs: number; types: readonly string[] };
}

/** Text handled as a message: what the person sent, or an option handled as if typed (DESIGN §4). */
export interface TypedText {
  text: string;
  /** True for an option's text: it is never a command and chooses from no offer. */
  fromOption: boolean;
}

/** What a turn's steps may ask of the rest of the system. */
export interface TurnServices {
  namespace: NamespaceClient;
  settings: TurnSettings;
  log: Logger;
  channel: TurnChannel;
  /** The offer a platform message carries (for reactions and replies), from the session store. */
  offerByRef(messageRef: string): Promise<string | null>;
  /** The message steps of the pipeline, for an option handled as if typed. */
  typedSteps(ctx: TurnContext): Promise<readonly Change[]>;
  /** Who may do what in the room (roles, pairing, the audit trail). */
  access: TurnAccess;
  /** The room's schedules and mute (/schedule, /mute), where the proactive parts run. */
  proactive?: RoomProactive;
  /** The room's voice tool, when its binding names one. */
  voice?: VoiceTool;
  /** Another configured namespace (only the room's voice tool is called on one). */
  namespaceNamed?(name: string): NamespaceClient;
}

/**
 * What a step sees of one turn, never changed in place: the event with its edge record
 * (sender, allowed, addressed, room, topic), the room's session as the steps before left
 * it, the history, and the services. A step returns changes; `after` is the context
 * they leave for the next step.
 */
export class TurnContext {
  private constructor(
    readonly event: InboundEvent,
    readonly session: Readonly<Session>,
    readonly history: readonly HistoryEntry[],
    private readonly services: TurnServices,
    /** The text a message step handles; undefined for a press, a reaction or a file. */
    readonly message: TypedText | undefined,
  ) {}

  /** The context at the start of a turn. */
  static start(
    event: InboundEvent,
    state: { session: Session; history: HistoryEntry[] },
    services: Omit<TurnServices, "channel" | "access"> & { channel?: TurnChannel; access?: TurnAccess },
  ): TurnContext {
    const message = event.kind === "message" ? { text: event.text, fromOption: false } : undefined;
    return new TurnContext(
      event,
      state.session,
      state.history,
      { ...services, channel: services.channel ?? quietChannel, access: services.access ?? openAccess },
      message,
    );
  }

  get namespace(): NamespaceClient {
    return this.services.namespace;
  }
  get settings(): TurnSettings {
    return this.services.settings;
  }
  get log(): Logger {
    return this.services.log;
  }
  get channel(): TurnChannel {
    return this.services.channel;
  }
  get access(): TurnAccess {
    return this.services.access;
  }

  get voice(): VoiceTool | undefined {
    return this.services.voice;
  }

  /** The namespace serving the room's voice tool. */
  voiceNamespace(): NamespaceClient | undefined {
    const voice = this.services.voice;
    return voice ? this.services.namespaceNamed?.(voice.namespace) : undefined;
  }
  get proactive(): RoomProactive | undefined {
    return this.services.proactive;
  }

  /** The offer a platform message carries, if any. */
  offerByRef(messageRef: string): Promise<string | null> {
    return this.services.offerByRef(messageRef);
  }

  /** The context after `changes`: the same turn with the session they leave. */
  after(changes: readonly Change[]): TurnContext {
    if (changes.length === 0) return this;
    const session = applyToSession(this.session, changes);
    return new TurnContext(this.event, session, this.history, this.services, this.message);
  }

  /** Handles `text` as if the person had typed it (an option that names no tool), through the message steps. */
  typed(text: string): Promise<readonly Change[]> {
    const ctx = new TurnContext(this.event, this.session, this.history, this.services, {
      text,
      fromOption: true,
    });
    return this.services.typedSteps(ctx);
  }
}
