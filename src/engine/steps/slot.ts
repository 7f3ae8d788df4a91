import type { MissingArg } from "../../sessions/session.js";
import { coerceArgument } from "../arguments.js";
import { say, setSlot, type Change } from "../changes.js";
import { andThen, pass, type Step } from "../composer.js";
import { texts } from "../texts.js";
import { callChecked } from "../tool-runner.js";
import type { TurnContext } from "../turn-context.js";

/** How long slot filling waits for a missing argument unless configured. */
const DEFAULT_SLOT_SECONDS = 15 * 60;

/** Slot filling that waited longer than the configured time ends, and the person is told. */
export function expireSlot(ctx: TurnContext): Change[] {
  const slot = ctx.session.slot;
  if (!slot) return [];
  const seconds = ctx.settings.slotSeconds ?? DEFAULT_SLOT_SECONDS;
  if (Date.now() - slot.createdAt < seconds * 1000) return [];
  return [setSlot(null), say(texts.slotExpired(slot.tool, slot.missing[0]!.name, seconds))];
}

/** Passes on after ending an expired slot, so the message is handled as a fresh one. */
export const slotExpiry: Step = (ctx) => pass(expireSlot(ctx));

/** A message while a tool waits for an argument (DESIGN §5) fills it, or `cancel` ends the wait. */
export const slotAnswer: Step = async (ctx) => {
  const slot = ctx.session.slot;
  if (!slot || !ctx.message) return pass();
  const { text } = ctx.message;
  if (text.trim().toLowerCase() === "cancel") return [setSlot(null), say(texts.slotCancelled)];
  const [arg, ...rest] = slot.missing;
  const value = coerceArgument(text, arg!.type);
  if (!value.ok) return [say(texts.badArgument(arg!.name, arg!.type))];
  return continueSlot(ctx, { ...slot.args, [arg!.name]: value.value }, rest);
};

/** With one more argument filled: asks for the next, or calls the tool when none is missing. */
export async function continueSlot(
  ctx: TurnContext,
  args: Record<string, unknown>,
  missing: MissingArg[],
): Promise<Change[]> {
  const slot = ctx.session.slot!;
  const tool = (await ctx.namespace.tools()).find((t) => t.name === slot.tool);
  if (missing.length > 0) {
    const next = missing[0]!;
    return [
      setSlot({ ...slot, args, missing }),
      say(texts.askForArgument(tool?.title ?? slot.tool, next.name, next.description, next.type)),
    ];
  }
  const ended = setSlot(null);
  if (!tool) return [ended, say(texts.notInNamespace(slot.tool, ctx.namespace.name))];
  return andThen(ctx, [ended], (next) => callChecked(next, tool, args, slot.question));
}
