import type { NextFunction } from "grammy";
import { pagedKeyboard, parsePageData } from "../../render/telegram-keyboard.js";
import { loggableError } from "../loggable-error.js";
import type { EdgeContext } from "./edge-context.js";

/**
 * ◀ ▶ on a paged keyboard: the page is rebuilt from the button's data and edited in
 * place, here at the edge; the press goes no further.
 */
export async function pageTurn(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const press = ctx.seen.press;
  const page = press?.data === undefined ? null : parsePageData(press.data);
  if (!press?.message || !page) return next();
  await ctx.toast(press.id);
  const inline_keyboard = pagedKeyboard(page.offerId, page.total, page.page).map((row) =>
    row.map(({ text, data }) => ({ text, callback_data: data })),
  );
  const { chat, message_id } = press.message;
  await ctx.api
    .editMessageReplyMarkup(chat.id, message_id, { reply_markup: { inline_keyboard } })
    .catch((err: unknown) =>
      ctx.deps.log.debug({ err: loggableError(err) }, "telegram: could not turn a keyboard page"),
    );
}
