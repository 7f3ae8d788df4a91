import type { InboundEvent } from "../core/event.js";
import { lazyChild, type Logger } from "../core/log.js";
import { interruptsTurn, NamespaceError } from "../core/errors.js";
import type { NamespaceClient } from "../namespace/namespace-client.js";
import type { Binding } from "../access/bindings.js";
import type { AuditLog } from "../sessions/audit-log.js";
import type { HistoryEntry, Session } from "../sessions/session.js";
import type { TurnAccess } from "./access.js";
import { applyChanges, say, type Change, type TurnResult } from "./changes.js";
import { run, StepFailure } from "./composer.js";
import { admission, messageSteps, turnSteps } from "./pipeline.js";
import type { RoomProactive } from "./room-proactive.js";
import { referenceId } from "./tool-result.js";
import { texts } from "./texts.js";
import type { VoiceTool } from "../core/adapter.js";
import { TurnContext, type TurnServices, type TurnSettings } from "./turn-context.js";
import type { TurnChannel } from "./turn-channel.js";

export type { TurnResult } from "./changes.js";
export type { TurnSettings } from "./turn-context.js";

/** What the engine needs from the rest of the system. */
export interface EngineDeps {
  namespaces: { get(name: string): NamespaceClient };
  /** The offer a platform message carries (for reactions), from the session store. */
  offerByRef(room: string, messageRef: string): Promise<string | null>;
  settings: TurnSettings;
  log: Logger;
  /**
   * Checks the sender against the current bindings (not the adapter's `allowed` flag read
   * back from Redis); without it only the flag counts.
   */
  senderAllowed?: (event: InboundEvent) => boolean;
  /** Roles, pairing and the audit trail; without it every allowed sender may do everything. */
  access?: AccessDeps;
  /** The room's schedules and mute, once the proactive parts run (they start after the engine). */
  proactive?: () => RoomProactive | undefined;
  /** The voice tool of an event's room, from its platform's bindings as configured now. */
  voiceOf?: (event: InboundEvent) => VoiceTool | undefined;
}

/** What the engine builds each turn's access from. */
export interface AccessDeps {
  bindingOf(event: InboundEvent): Binding | undefined;
  paired(binding: string, senderId: string): boolean;
  audit?: AuditLog;
  /** Queues an event into a room's inbox (de-duplicated by its id). */
  enqueue(event: InboundEvent): Promise<void>;
}

/**
 * The platform-neutral turn: one inbound event and the room's session in, a neutral
 * outcome and the new session out, by the steps of pipeline.ts. It knows no platform
 * and does no sending.
 */
export class Engine {
  constructor(private readonly deps: EngineDeps) {}

  /**
   * Whether a queued event may become a turn at all (the pipeline's admission). The
   * caller drops an event refused here without loading or writing any session state.
   */
  admits(event: InboundEvent): boolean {
    return admission.every((admit) => admit(event, this.deps.senderAllowed));
  }

  /** Runs one turn. Failures become a line for the person; the session stays consistent. */
  async run(
    event: InboundEvent,
    state: { session: Session; history: HistoryEntry[] },
    channel?: TurnChannel,
  ): Promise<TurnResult> {
    const log = lazyChild(this.deps.log, { turn: event.eventId, room: event.room });
    const ctx = TurnContext.start(event, state, {
      namespace: this.deps.namespaces.get(event.namespace),
      settings: this.deps.settings,
      log,
      ...(channel ? { channel } : {}),
      offerByRef: (ref) => this.deps.offerByRef(event.room, ref),
      typedSteps: (typed) => run(messageSteps, typed),
      ...(this.deps.access ? { access: this.access(this.deps.access, event) } : {}),
      proactive: this.deps.proactive?.(),
      ...voiceServices(this.deps, event),
    });
    let changes: readonly Change[];
    try {
      changes = await run(turnSteps, ctx);
    } catch (err) {
      const failure = err instanceof StepFailure ? err : new StepFailure([], err);
      // A restarting namespace or a message that crashes it: the scheduler waits or sets it aside.
      if (interruptsTurn(failure.failure)) throw failure.failure;
      changes = [...failure.changes, say(this.failureLine(failure.failure, log))];
    }
    return applyChanges(state.session, changes);
  }

  private access(deps: AccessDeps, event: InboundEvent): TurnAccess {
    const binding = deps.bindingOf(event);
    const audit = deps.audit;
    return {
      ...(binding ? { binding } : {}),
      admits: (queued) => this.admits(queued),
      paired: deps.paired,
      record: async (entry) => audit?.record(entry),
      opened: async (id, requested, expired, expiresAt) => audit?.opened(id, requested, expired, expiresAt),
      closed: async (id) => audit?.closed(id),
      relay: deps.enqueue,
    };
  }

  private failureLine(err: unknown, log: Logger): string {
    if (err instanceof NamespaceError) {
      // Already classified (and logged with its ref) where it happened: the person gets its line.
      log.warn({ err }, "namespace failed during the turn");
      return err.userText;
    }
    const ref = referenceId();
    log.error({ err, ref }, "turn failed");
    return texts.internal(ref);
  }
}

/** The room's voice tool and the namespace to call it on, when the room's binding names one. */
function voiceServices(
  deps: EngineDeps,
  event: InboundEvent,
): Pick<TurnServices, "voice" | "namespaceNamed"> {
  const voice = deps.voiceOf?.(event);
  return voice ? { voice, namespaceNamed: (name) => deps.namespaces.get(name) } : {};
}
