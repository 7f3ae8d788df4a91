import type { NextFunction } from "grammy";
import { CHOSEN_BUTTON_DATA, NOOP_DATA } from "../../render/telegram-keyboard.js";
import type { EdgeContext } from "./edge-context.js";

/**
 * A press that can choose nothing (the one button left on a chosen offer, a page
 * counter, a press on a message too old to carry it): answered so that the client's
 * spinner stops, and never a turn, whoever pressed it.
 */
export async function spentPress(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const press = ctx.taken.callback_query;
  if (press && (press.data === CHOSEN_BUTTON_DATA || press.data === NOOP_DATA || !press.message)) {
    return ctx.toast(press.id);
  }
  await next();
}
