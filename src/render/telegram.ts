import type { Reply, ReplyOption } from "../core/reply.js";
import { buildDoc } from "./doc.js";
import type { HtmlDialect } from "./html.js";
import { htmlOf, htmlToPlainText } from "./html.js";
import { splitToFit, withoutBlankParts } from "./split.js";
import { pagedKeyboard, type TelegramButton } from "./telegram-keyboard.js";

export type { TelegramButton } from "./telegram-keyboard.js";

/** One Telegram message: text for parse_mode HTML, and an inline keyboard (rows of buttons). */
export interface TelegramMessage {
  html: string;
  keyboard?: TelegramButton[][];
}

/** Most characters of parsed text (UTF-16 code units) one Telegram message may carry. */
export const TELEGRAM_TEXT_LIMIT = 4096;
/** Longest label (UTF-16 code units) a button is trusted to show whole. */
const BUTTON_LABEL_LIMIT = 64;
/** Most buttons shown before the options are also listed in the text. */
const BUTTON_COUNT_LIMIT = 8;
/** Most options given a labelled button each (one per row); more get a paged keyboard of numbers. */
const LABELLED_ROWS_LIMIT = 20;
/** Telegram's limit on callback data, in UTF-8 bytes. */
const CALLBACK_DATA_LIMIT = 64;
const ELLIPSIS = "…";

/** The named entities Telegram's HTML parser knows. */

const TELEGRAM_HTML: HtmlDialect = { lineBreak: "\n", codeOpen: "<pre>", codeClose: "</pre>" };
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const utf8 = new TextEncoder();

/**
 * Renders a reply as Telegram HTML messages of at most TELEGRAM_TEXT_LIMIT parsed
 * characters each, split at lines (then words, then graphemes), buttons on the last one.
 *
 * Options: every button is numbered (`1. label`) so that replying with the number, which
 * always works, can be discovered from the buttons. While at most BUTTON_COUNT_LIMIT options
 * each fit a button (no line break, at most BUTTON_LABEL_LIMIT characters), the buttons
 * carry them whole and the text does not repeat them. Otherwise every option is also listed
 * numbered in the text, in full, and a label too long for a button is shortened there,
 * between grapheme clusters, to its first line and an ellipsis. Past LABELLED_ROWS_LIMIT
 * options the keyboard carries numbers and pages (◀ ▶), since Telegram takes at most 100
 * buttons in one message.
 */
export function renderTelegram(reply: Reply): TelegramMessage[] {
  const listed =
    reply.options.length > BUTTON_COUNT_LIMIT || !reply.options.every((o) => fitsButton(o.label));
  const tail = listed ? reply.options.map((option, i) => `${i + 1}. ${option.label}`) : [];
  if (listed) tail.push("Press a button or reply with a number to choose.");
  const doc = buildDoc(reply.blocks, tail);
  // The parsed text of a part is exactly its slice of doc.text, so its length is the measure.
  const parts = withoutBlankParts(
    doc.text,
    splitToFit(doc.text, TELEGRAM_TEXT_LIMIT, (start, end) => end - start),
  );
  const messages: TelegramMessage[] = parts.map(({ start, end }) => ({
    html: htmlOf(doc, start, end, TELEGRAM_HTML),
  }));
  const last = messages.at(-1);
  if (last && reply.options.length > LABELLED_ROWS_LIMIT) {
    last.keyboard = pagedKeyboard(offerIdOf(reply), reply.options.length, 0);
  } else if (last && reply.options.length > 0) {
    last.keyboard = reply.options.map((option, i) => [button(option, i + 1)]);
  }
  return messages;
}

/** Below a part sent again after an attempt that may have arrived (Telegram has no idempotent send). */
export const RESEND_NOTE = "↻ Sent again after an interruption; you may see this message twice.";
/** The same, alone before a part too long to carry it. */
export const RESEND_NOTE_BEFORE =
  "↻ The next message is sent again after an interruption; you may see it twice.";

/**
 * A part sent again after an attempt whose outcome is unknown, with a note for the person:
 * below the part's text (italic) when both fit one message, otherwise alone in a message
 * before the part, so that the part stays exactly as first sent — whole, and with its
 * buttons (the last message of a reply carries them). The part's split never changes.
 */
export function withResendNote(part: TelegramMessage): TelegramMessage[] {
  const below = `\n\n${RESEND_NOTE}`;
  if (htmlToPlainText(part.html).length + below.length <= TELEGRAM_TEXT_LIMIT) {
    return [{ ...part, html: `${part.html}\n\n<i>${RESEND_NOTE}</i>` }];
  }
  return [{ html: `<i>${RESEND_NOTE_BEFORE}</i>` }, part];
}

/** The offer the options belong to; option tokens start with its id (`<offer id>.<n>`). */
function offerIdOf(reply: Reply): string {
  return reply.offerId ?? reply.options[0]!.token.split(".")[0]!;
}

function fitsButton(label: string): boolean {
  return label.length <= BUTTON_LABEL_LIMIT && !/[\r\n]/.test(label);
}

function button(option: ReplyOption, number: number): TelegramButton {
  if (utf8.encode(option.token).length > CALLBACK_DATA_LIMIT) {
    throw new RangeError(`option token is longer than ${CALLBACK_DATA_LIMIT} bytes of callback data`);
  }
  return {
    text: `${number}. ${fitsButton(option.label) ? option.label : shorten(option.label)}`,
    data: option.token,
  };
}

/** The label's first line, cut between grapheme clusters to fit a button with an ellipsis. */
function shorten(label: string): string {
  const firstLine = label.split(/\r\n|\r|\n/, 1)[0] ?? "";
  let kept = "";
  // Segmenting is slow on long strings; two code units past the limit keep every boundary
  // that can matter decided as in the whole line.
  for (const { segment } of graphemes.segment(firstLine.slice(0, BUTTON_LABEL_LIMIT + 2))) {
    if (kept.length + segment.length + ELLIPSIS.length > BUTTON_LABEL_LIMIT) break;
    kept += segment;
  }
  return kept + ELLIPSIS;
}
