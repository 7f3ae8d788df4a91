import { slotOf, type MissingArg, type SlotState } from "../../sessions/session.js";
import { personOf, toThemAlone } from "../access.js";
import { coerceArgument } from "../arguments.js";
import { say, setSlot, type Change } from "../changes.js";
import { andThen, pass, type Step } from "../composer.js";
import { texts } from "../texts.js";
import { callChecked } from "../tool-runner.js";
import type { TurnContext } from "../turn-context.js";

/** How long slot filling waits for a missing argument unless configured. */
const DEFAULT_SLOT_SECONDS = 15 * 60;

/** The slot waiting for this turn's sender: another member's pending argument is not theirs to fill. */
export function ownSlot(ctx: TurnContext): SlotState | undefined {
  return slotOf(ctx.session, ctx.event.sender.id);
}

/** The sender's slot filling that waited longer than the configured time ends, and they are told. */
export function expireSlot(ctx: TurnContext): Change[] {
  const slot = ownSlot(ctx);
  if (!slot) return [];
  const seconds = ctx.settings.slotSeconds ?? DEFAULT_SLOT_SECONDS;
  if (Date.now() - slot.createdAt < seconds * 1000) return [];
  return [
    setSlot(ctx.event.sender.id, null),
    say(texts.slotExpired(slot.tool, slot.missing[0]!.name, seconds)),
  ];
}

/** Passes on after ending an expired slot, so the message is handled as a fresh one. */
export const slotExpiry: Step = (ctx) => pass(expireSlot(ctx));

/**
 * A message while a tool waits for the sender's argument (DESIGN §5) fills it, or
 * `cancel` ends the wait. Another member's message is an ordinary turn: a pending
 * argument belongs to the person it was asked of.
 */
export const slotAnswer: Step = async (ctx) => {
  const slot = ownSlot(ctx);
  if (!slot || !ctx.message) return pass();
  const { text } = ctx.message;
  if (text.trim().toLowerCase() === "cancel") {
    return [setSlot(ctx.event.sender.id, null), say(texts.slotCancelled)];
  }
  const [arg, ...rest] = slot.missing;
  const value = coerceArgument(text, arg!.type);
  if (!value.ok)
    return [say(texts.badArgument(arg!.name, arg!.type)), ...toThemAlone(ctx.access, personOf(ctx.event))];
  return continueSlot(ctx, slot, { ...slot.args, [arg!.name]: value.value }, rest);
};

/** With one more argument filled: asks for the next, or calls the tool when none is missing. */
export async function continueSlot(
  ctx: TurnContext,
  slot: SlotState,
  args: Record<string, unknown>,
  missing: MissingArg[],
): Promise<Change[]> {
  const owner = ctx.event.sender.id;
  const tool = (await ctx.namespace.tools()).find((t) => t.name === slot.tool);
  if (missing.length > 0) {
    const next = missing[0]!;
    return [
      setSlot(owner, { ...slot, args, missing }),
      say(texts.askForArgument(tool?.title ?? slot.tool, next.name, next.description, next.type)),
      ...toThemAlone(ctx.access, personOf(ctx.event)),
    ];
  }
  const ended = setSlot(owner, null);
  if (!tool) return [ended, say(texts.notInNamespace(slot.tool, ctx.namespace.name))];
  return andThen(ctx, [ended], (next) => callChecked(next, tool, args, slot.question));
}
