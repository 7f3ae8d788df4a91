import type { IncomingMessage, ServerResponse } from "node:http";
import { parseTelegramHtml, type ParsedEntity } from "./telegram-html.js";

/**
 * The wire side of the Bot API stand-in: the objects it exchanges, Telegram's
 * error shapes and limits, and the checks sendMessage and the edits apply.
 */

/** A JSON object as the Bot API sends and receives it. */
export type Json = Record<string, unknown>;

/** A bot the stand-in serves; its token is `<id>:<secret>` like a real one. */
export interface StandinBot {
  id: number;
  token: string;
  username: string;
  firstName: string;
}

/** A Telegram user as tests describe one. */
export interface StandinUser {
  id: number;
  first_name: string;
  username?: string;
  is_bot?: false;
}

/** A chat as tests describe one: a private chat is the user's id; groups are negative. */
export interface StandinChat {
  id: number;
  type: "private" | "group" | "supergroup";
  title?: string;
  first_name?: string;
  is_forum?: true;
}

/** One Bot API call as the stand-in received and answered it. */
export interface ApiCall {
  botId: number;
  method: string;
  params: Json;
  at: number;
  ok: boolean;
  response: Json;
}

/** A message in a chat (from a user or the bot), kept as the Bot API describes it. */
export interface StoredMessage extends Json {
  message_id: number;
  chat: StandinChat;
  date: number;
  from: Json;
  text?: string;
  entities?: ParsedEntity[];
  message_thread_id?: number;
  reply_markup?: { inline_keyboard: { text: string; callback_data?: string }[][] };
  /** Stand-in bookkeeping, not part of the Bot API object. */
  sent?: {
    html?: string;
    parse_mode?: string;
    link_preview_options?: Json;
    reply_to?: number;
    edits: number;
    /** The order the stand-in took the bot's sends in, across chats (ephemeral messages have no message id to order by). */
    seq?: number;
    /** The one member an ephemeral message is for. */
    receiver?: number;
    /** When each editMessageText of this message arrived (ms), to check edit pacing. */
    editTimes?: number[];
    /** The file a sendPhoto / sendDocument uploaded. */
    upload?: { method: string; name: string; size: number; content: Buffer };
  };
}

/** A failure the next calls of a method get instead of their answer. */
export type InjectedFailure =
  { status: 429; retryAfter: number } | { status: 500 | 502 | 503 } | { status: 400; description: string };

/** Characters of parsed text (UTF-16 code units) one message may carry. */
const MESSAGE_LIMIT = 4096;
/** Bytes of callback data one button may carry. */
const CALLBACK_DATA_BYTES = 64;

/** A refused call: Telegram's error_code and description (400s get the "Bad Request: " prefix). */
export class BadRequest extends Error {
  constructor(
    description: string,
    readonly code = 400,
    readonly retryAfter?: number,
    /** Further ResponseParameters, e.g. `migrate_to_chat_id` for a group that became a supergroup. */
    readonly parameters: Json = {},
  ) {
    super(
      code === 400 ? `Bad Request: ${description}` : code === 403 ? `Forbidden: ${description}` : description,
    );
  }
}

/** Telegram's answer to an edit that changes nothing. */
export function notModified(): BadRequest {
  return new BadRequest(
    "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
  );
}

/** A 409 Conflict body, as getUpdates gets it beside another poller or a webhook. */
export function conflict(what: string): Json {
  return { ok: false, error_code: 409, description: `Conflict: ${what}` };
}

/** The body an injected failure answers with, in Telegram's error shape. */
export function failureBody(failure: InjectedFailure): Json {
  if (failure.status === 429) {
    return {
      ok: false,
      error_code: 429,
      description: `Too Many Requests: retry after ${failure.retryAfter}`,
      parameters: { retry_after: failure.retryAfter },
    };
  }
  if (failure.status === 400)
    return { ok: false, error_code: 400, description: `Bad Request: ${failure.description}` };
  return {
    ok: false,
    error_code: failure.status,
    description: failure.status === 502 ? "Bad Gateway" : "Internal Server Error",
  };
}

/** Checks and parses a message text as sendMessage and editMessageText do: parse mode, emptiness, length. */
export function parseText(p: Json): { text: string; entities: ParsedEntity[] } {
  if (typeof p.text !== "string" || p.text.length === 0) throw new BadRequest("message text is empty");
  let text = p.text;
  let entities: ParsedEntity[] = [];
  if (p.parse_mode === "HTML") {
    const parsed = parseTelegramHtml(p.text);
    if (!parsed.ok) throw new BadRequest(parsed.error);
    ({ text, entities } = parsed);
  }
  if (text.trim() === "") throw new BadRequest("message text is empty");
  if (text.length > MESSAGE_LIMIT) throw new BadRequest("message is too long");
  return { text, entities };
}

/** Telegram refuses an inline keyboard of more buttons than this. */
export const MAX_KEYBOARD_BUTTONS = 100;

/** Checks an inline keyboard as Telegram does: at most 100 buttons, button text present, callback data 1–64 bytes. */
export function parseMarkup(raw: unknown): StoredMessage["reply_markup"] {
  if (raw === undefined) return undefined;
  const markup = (typeof raw === "string" ? JSON.parse(raw) : raw) as StoredMessage["reply_markup"];
  const buttons = (markup?.inline_keyboard ?? []).reduce((n, row) => n + row.length, 0);
  if (buttons > MAX_KEYBOARD_BUTTONS) throw new BadRequest("Bad Request: reply markup is too long");
  for (const row of markup?.inline_keyboard ?? []) {
    for (const button of row) {
      if (typeof button.text !== "string" || button.text === "") throw new BadRequest("button text is empty");
      const data = button.callback_data;
      if (data !== undefined && (data === "" || Buffer.byteLength(data) > CALLBACK_DATA_BYTES)) {
        throw new BadRequest("BUTTON_DATA_INVALID");
      }
    }
  }
  return markup;
}

/** The bot as a User object (getMe, `from` of its messages). */
export function botUser(bot: StandinBot): Json {
  return { id: bot.id, is_bot: true, first_name: bot.firstName, username: bot.username };
}

/** Telegram marks commands and @mentions in what users type; the bot relies on those entities. */
export function detectEntities(text: string): ParsedEntity[] {
  const entities: ParsedEntity[] = [];
  for (const m of text.matchAll(/(^|\s)(\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?)/g)) {
    entities.push({ type: "bot_command", offset: m.index + m[1]!.length, length: m[2]!.length });
  }
  for (const m of text.matchAll(/(^|[^A-Za-z0-9_/])(@[A-Za-z0-9_]{4,32})/g)) {
    entities.push({ type: "mention", offset: m.index + m[1]!.length, length: m[2]!.length });
  }
  return entities.sort((a, b) => a.offset - b.offset);
}

/** A stored message as the Bot API returns it, without the stand-in's bookkeeping. */
export function stripBookkeeping(message: StoredMessage): Json {
  const { sent: _sent, ...rest } = message;
  return rest;
}

/** Answers a request with JSON, unless the client already went away. */
export function reply(res: ServerResponse, status: number, body: Json): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** An uploaded file of a multipart call (sendPhoto, sendDocument), as the stand-in received it. */
export interface UploadedFile {
  name: string;
  size: number;
  content: Buffer;
}

/** Reads call parameters from a JSON, form-encoded or multipart body (uploads become UploadedFile). */
export async function readBody(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const type = req.headers["content-type"] ?? "";
  if (type.includes("multipart/form-data")) return readMultipart(body, type);
  const raw = body.toString("utf8");
  if (raw === "") return {};
  if (type.includes("application/json")) return JSON.parse(raw) as Json;
  return Object.fromEntries(new URLSearchParams(raw));
}

/** Parses a multipart/form-data body: text fields as strings, file parts as UploadedFile. */
function readMultipart(body: Buffer, type: string): Json {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type);
  if (!boundary) throw new BadRequest("multipart body without a boundary");
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const params: Json = {};
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === "--") break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf("\r\n\r\n");
    const headers = part.subarray(0, split).toString("utf8");
    const content = part.subarray(split + 4);
    const name = /name="([^"]*)"/.exec(headers)?.[1];
    const filename = /filename="?([^";\r\n]+)"?/.exec(headers)?.[1];
    const isFile = filename !== undefined || /^content-type:/im.test(headers);
    if (name !== undefined) {
      params[name] = isFile
        ? ({ name: filename ?? name, size: content.length, content } satisfies UploadedFile)
        : content.toString("utf8");
    }
    at = next;
  }
  return params;
}
