import { optionToken } from "../core/option-token.js";

/** One inline keyboard button: the text it shows and the callback data a press sends. */
export interface TelegramButton {
  text: string;
  data: string;
}

/** Number buttons on one page of a paged keyboard, far under Telegram's 100 buttons. */
export const PAGE_SIZE = 20;
/** Number buttons per row, so rows stay short on a phone. */
const ROW_SIZE = 5;
/** Callback data of a page turn: `rg:pg:<offer id>:<page>:<option count>`. */
const PAGE_PREFIX = "rg:pg:";
/** Callback data of the page counter button, which does nothing when pressed. */
export const NOOP_DATA = "rg:noop";
/**
 * Callback data of the single button left on an offer once an option was chosen: a
 * press on it only stops the client's spinner, it never becomes a turn.
 */
export const CHOSEN_BUTTON_DATA = "rg:chosen";

/** What a page-turn button asks for. */
export interface PageRequest {
  offerId: string;
  page: number;
  total: number;
}

/** Callback data asking for one page of an offer's keyboard. */
export function pageData(request: PageRequest): string {
  return `${PAGE_PREFIX}${request.offerId}:${request.page}:${request.total}`;
}

/** Reads page-turn callback data back; null when the data is not a page turn or is out of range. */
export function parsePageData(data: string): PageRequest | null {
  const match = /^rg:pg:([A-Za-z0-9_-]{1,24}):(\d{1,5}):(\d{1,6})$/.exec(data);
  if (!match) return null;
  const request = { offerId: match[1]!, page: Number(match[2]), total: Number(match[3]) };
  return request.total > 0 && request.page < pageCount(request.total) ? request : null;
}

/** How many pages an offer of `total` options has. */
export function pageCount(total: number): number {
  return Math.max(1, Math.ceil(total / PAGE_SIZE));
}

/**
 * One page of the keyboard of an offer too large for one keyboard: number buttons (the
 * options themselves are listed in the message text) and a row ◀ page/pages ▶ that turns
 * the page in place. Built from the offer id alone, so a page turn needs no stored state.
 */
export function pagedKeyboard(offerId: string, total: number, page: number): TelegramButton[][] {
  const first = page * PAGE_SIZE + 1;
  const last = Math.min(total, first + PAGE_SIZE - 1);
  const rows: TelegramButton[][] = [];
  for (let n = first; n <= last; n++) {
    if ((n - first) % ROW_SIZE === 0) rows.push([]);
    rows.at(-1)!.push({ text: String(n), data: optionToken(offerId, n) });
  }
  const pages = pageCount(total);
  if (pages > 1) {
    const nav: TelegramButton[] = [];
    if (page > 0) nav.push({ text: "◀", data: pageData({ offerId, page: page - 1, total }) });
    nav.push({ text: `${page + 1}/${pages}`, data: NOOP_DATA });
    if (page < pages - 1) nav.push({ text: "▶", data: pageData({ offerId, page: page + 1, total }) });
    rows.push(nav);
  }
  return rows;
}
