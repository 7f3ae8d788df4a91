import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import type { NamespaceClient } from "../namespace/namespace-client.js";
import type { HistoryEntry, MissingArg, Offer, OfferOption, Session } from "../sessions/session.js";
import { coerceArgument } from "./arguments.js";
import { NamespaceError } from "../core/errors.js";
import { approvalFromText, decideApproval } from "./approvals.js";
import { callByAddress } from "./discovery.js";
import { handleCommand } from "./command-handlers.js";
import { suggestTools } from "./no-router.js";
import { parseCommand } from "./command-parser.js";
import { findByToken, isOptionNumber, openOffer, optionFromText } from "./offers.js";
import { referenceId } from "./tool-result.js";
import { texts } from "./texts.js";
import { callChecked, enable, runTool } from "./tool-runner.js";
import { Turn, type TurnResult, type TurnSettings } from "./turn.js";
import { runProactive } from "./proactive-turn.js";
import { forgetTaken, wasTaken } from "./taken.js";
import { quietChannel, type TurnChannel } from "./turn-channel.js";

/** How long slot filling waits for a missing argument unless configured. */
const DEFAULT_SLOT_SECONDS = 15 * 60;

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
}

/**
 * The platform-neutral turn: one inbound event and the room's session in, a neutral
 * outcome and the new session out. It knows no platform and does no sending.
 */
export class Engine {
  constructor(private readonly deps: EngineDeps) {}

  /**
   * Whether a queued event may become a turn at all: the adapter let it in and the sender
   * is allowed by the bindings as configured now. The caller drops an event refused here
   * without loading or writing any session state.
   */
  admits(event: InboundEvent): boolean {
    return event.sender.allowed && (this.deps.senderAllowed?.(event) ?? true);
  }

  /** Runs one turn. Failures become a line for the person; the session stays consistent. */
  async run(
    event: InboundEvent,
    state: { session: Session; history: HistoryEntry[] },
    channel: TurnChannel = quietChannel,
  ): Promise<TurnResult> {
    const log = this.deps.log.child({ turn: event.eventId, room: event.room });
    const turn = new Turn(
      event,
      structuredClone(state.session),
      state.history,
      this.deps.namespaces.get(event.namespace),
      this.deps.settings,
      log,
      channel,
    );
    try {
      // An event a running turn already took (an answer, a /cancel) has been handled.
      if (wasTaken(turn, event)) {
        forgetTaken(turn, event);
        return turn.result();
      }
      await this.dispatch(turn);
    } catch (err) {
      if (err instanceof NamespaceError) {
        // Already classified (and logged with its ref) where it happened: the person gets its line.
        log.warn({ err }, "namespace failed during the turn");
        turn.say(err.userText);
      } else {
        const ref = referenceId();
        log.error({ err, ref }, "turn failed");
        turn.say(texts.internal(ref));
      }
    }
    return turn.result();
  }

  private async dispatch(turn: Turn): Promise<void> {
    const { event } = turn;
    // Strangers are refused at the edge; one that got this far anyway gets nothing.
    if (!this.admits(event)) return;
    switch (event.kind) {
      case "message":
        return this.message(turn, event.text);
      case "choice": {
        const found = findByToken(turn.session, event.token);
        if ("problem" in found) {
          turn.toast = texts.choice[found.problem];
          return;
        }
        return this.choose(turn, found.offer, found.option);
      }
      case "reaction": {
        const offerId = await this.deps.offerByRef(event.room, event.messageRef);
        const offer = turn.session.offers.find((o) => o.id === offerId);
        const option = offer?.options[event.number - 1];
        if (!offer || !option) return;
        const found = findByToken(turn.session, option.token);
        if ("problem" in found) {
          turn.toast = texts.choice[found.problem];
          return;
        }
        return this.choose(turn, found.offer, found.option);
      }
      case "file":
        return this.file(turn, event.file);
      case "proactive":
        return runProactive(turn, event);
    }
  }

  /**
   * A typed message: the text goes on exactly as sent; a trimmed copy only recognises
   * commands, cancel and choices. An option's text (`fromOption`) is never a command.
   */
  private async message(turn: Turn, raw: string, fromOption = false): Promise<void> {
    const { maxMessageChars } = turn.settings;
    if (raw.length > maxMessageChars) return turn.say(texts.tooLong(raw.length, maxMessageChars));
    const trimmed = raw.trim();
    if (trimmed === "") return;
    if (!fromOption && trimmed.startsWith("/")) {
      const command = parseCommand(trimmed);
      if (command) return handleCommand(turn, command);
    }
    turn.remember("user", raw);
    this.expireSlot(turn);
    if (turn.session.slot) return this.fillSlot(turn, raw);
    if (!fromOption) {
      const replied = turn.event.replyTo
        ? await this.deps.offerByRef(turn.event.room, turn.event.replyTo)
        : null;
      const offer = openOffer(turn.session, replied);
      const closed = offer ? undefined : turn.session.offers.find((o) => o.id === replied);
      // A reply to an offer that is used up or expired names that offer: it gets no other one's option.
      if (closed && (isOptionNumber(trimmed) || optionFromText(closed, raw))) {
        return turn.say(texts.choice[closed.chosen ? "used" : "expired"]);
      }
      if (offer) {
        const option = optionFromText(offer, raw) ?? approvalFromText(offer, raw);
        if (option) return this.choose(turn, offer, option);
        if (isOptionNumber(trimmed)) return turn.say(texts.numberOutOfRange(trimmed, offer.options.length));
      }
    }
    const router = turn.namespace.askTool;
    if (router === null || !(await turn.namespace.has(router))) return suggestTools(turn, raw);
    await runTool(turn, router, { question: raw });
  }

  /** Drops slot filling that waited longer than the configured time, and says so. */
  private expireSlot(turn: Turn): void {
    const slot = turn.session.slot;
    if (!slot) return;
    const seconds = turn.settings.slotSeconds ?? DEFAULT_SLOT_SECONDS;
    if (Date.now() - slot.createdAt < seconds * 1000) return;
    turn.session.slot = null;
    turn.say(texts.slotExpired(slot.tool, slot.missing[0]!.name, seconds));
  }

  /** DESIGN §4: a tool option is enabled and called with the original question; any other option is typed. */
  private async choose(turn: Turn, offer: Offer, option: OfferOption): Promise<void> {
    offer.chosen = { token: option.token, label: option.label, at: Date.now() };
    turn.chosen = { offerId: offer.id, label: option.label, messageRefs: offer.messageRefs };
    turn.toast = texts.chosen(option.label);
    if (offer.callWith) {
      const args = offer.callWith;
      await callByAddress(turn, option.option, args, (tool, call, question) =>
        callChecked(turn, tool, call, question),
      );
      return;
    }
    if (offer.approval) {
      return decideApproval(turn, offer.approval, option, (tool, args, question) =>
        callChecked(turn, tool, args, question, true),
      );
    }
    if (await turn.namespace.has(option.option)) {
      enable(turn, [option.option]);
      await runTool(turn, option.option, { question: offer.question });
      return;
    }
    await this.message(turn, option.option, true);
  }

  private async fillSlot(turn: Turn, text: string): Promise<void> {
    const slot = turn.session.slot!;
    if (text.trim().toLowerCase() === "cancel") {
      turn.session.slot = null;
      return turn.say(texts.slotCancelled);
    }
    const [arg, ...rest] = slot.missing;
    const value = coerceArgument(text, arg!.type);
    if (!value.ok) return turn.say(texts.badArgument(arg!.name, arg!.type));
    await this.continueSlot(turn, { ...slot.args, [arg!.name]: value.value }, rest);
  }

  private async continueSlot(
    turn: Turn,
    args: Record<string, unknown>,
    missing: MissingArg[],
  ): Promise<void> {
    const slot = turn.session.slot!;
    const tool = (await turn.namespace.tools()).find((t) => t.name === slot.tool);
    if (missing.length > 0) {
      turn.session.slot = { ...slot, args, missing };
      const next = missing[0]!;
      return turn.say(texts.askForArgument(tool?.title ?? slot.tool, next.name, next.description, next.type));
    }
    turn.session.slot = null;
    if (!tool) return turn.say(texts.notInNamespace(slot.tool, turn.namespace.name));
    await callChecked(turn, tool, args, slot.question);
  }

  private async file(turn: Turn, file: Extract<InboundEvent, { kind: "file" }>["file"]): Promise<void> {
    this.expireSlot(turn);
    // A file refused at the edge (too large, not text, too slow) is said so first.
    if (file.rejected !== undefined) return turn.say(texts.fileRejected(file.rejected));
    const slot = turn.session.slot;
    if (!slot) return turn.say(texts.fileNotExpected);
    const [arg, ...rest] = slot.missing;
    if (arg!.type !== undefined && arg!.type !== "string")
      return turn.say(texts.fileWrongArgument(arg!.name, arg!.type));
    if (file.rejected !== undefined || file.text === undefined) {
      return turn.say(texts.fileRejected(file.rejected ?? "it could not be read as text"));
    }
    turn.remember("user", `[file ${file.name}]`);
    await this.continueSlot(turn, { ...slot.args, [arg!.name]: file.text }, rest);
  }
}
