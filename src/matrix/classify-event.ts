import { keycapNumber } from "../render/matrix.js";
import {
  EncryptedFileSchema,
  MessageContentSchema,
  PowerLevelsSchema,
  RelatesToSchema,
  type EncryptedFile,
  type MessageContent,
  type PowerLevels,
  type RoomEvent,
} from "./matrix-events.js";

/** Where a message sits: the thread it is in and the event it replies to. */
interface Placement {
  threadRoot?: string;
  replyTo?: string;
}

/** What one room event means to the adapter, decided without any I/O. */
export type Classified =
  | { type: "ignore"; reason: string }
  | { type: "encrypted" }
  | { type: "power-levels"; levels: PowerLevels }
  | ({ type: "message"; text: string } & Placement)
  | { type: "reaction"; target: string; number: number }
  /** An edit (m.replace) of an earlier message: the event it replaces and the new text. */
  | { type: "edit"; target: string; text: string }
  | ({
      type: "file";
      name: string;
      mime: string;
      size: number;
      url?: string;
      /** How the file is encrypted, for a file sent in an encrypted room. */
      encryption?: EncryptedFile;
      rejected?: string;
    } & Placement);

/** The rules the classifier needs from its surroundings. */
export interface ClassifyContext {
  botUserId: string;
  maxFileBytes: number;
}

const TEXT_MIMES = new Set([
  "application/json",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/x-sh",
  "application/javascript",
  "application/sql",
  "application/csv",
]);

/** Whether a file of this media type can be read as text and passed on as an argument. */
export function isTextMime(mime: string): boolean {
  const base = mime.split(";")[0]?.trim().toLowerCase() ?? "";
  return base.startsWith("text/") || TEXT_MIMES.has(base) || base.endsWith("+json") || base.endsWith("+xml");
}

const FALLBACK_HEAD = /^> <[^>\n]+> /;

/**
 * Removes the quoted fallback (`> <@user:server> …` lines and the blank line after
 * them) that clients put in front of a reply's body, leaving what the person wrote.
 */
export function stripReplyFallback(body: string): string {
  if (!FALLBACK_HEAD.test(body)) return body;
  const lines = body.split("\n");
  let i = 0;
  while (i < lines.length && (lines[i]?.startsWith("> ") || lines[i] === ">")) i++;
  if (lines[i] === "") i++;
  return lines.slice(i).join("\n");
}

/** A user's power level in a room: their own entry, else the room's default. */
export function powerLevelOf(levels: PowerLevels, userId: string): number {
  return levels.users[userId] ?? levels.users_default;
}

/** The thread and reply a message belongs to, from its `m.relates_to`. */
export function placementOf(content: MessageContent): Placement {
  const relates = content["m.relates_to"];
  const threadRoot = relates?.rel_type === "m.thread" ? relates.event_id : undefined;
  // In a thread, an in-reply-to marked as falling back only points at the thread's last event.
  const genuineReply = !(threadRoot && relates?.is_falling_back === true);
  const replyTo = genuineReply ? relates?.["m.in_reply_to"]?.event_id : undefined;
  return { ...(threadRoot ? { threadRoot } : {}), ...(replyTo ? { replyTo } : {}) };
}

function classifyFile(content: MessageContent, maxFileBytes: number): Classified {
  const name = content.filename ?? content.body;
  const mime = content.info?.mimetype ?? "application/octet-stream";
  const size = content.info?.size ?? 0;
  const file = { type: "file" as const, name, mime, size, ...placementOf(content) };
  if (content.msgtype !== "m.file" || !isTextMime(mime)) {
    return { ...file, rejected: `${name} is not a text file (${mime}); only text files can be read.` };
  }
  const encryption = EncryptedFileSchema.safeParse(content.file);
  const url = content.url ?? (encryption.success ? encryption.data.url : undefined);
  if (url === undefined) return { ...file, rejected: `${name} has no readable file attached.` };
  if (size > maxFileBytes) {
    return { ...file, rejected: `${name} is ${size} bytes; files up to ${maxFileBytes} bytes can be read.` };
  }
  return {
    ...file,
    url,
    ...(content.url === undefined && encryption.success ? { encryption: encryption.data } : {}),
  };
}

function classifyMessage(event: RoomEvent, maxFileBytes: number): Classified {
  const parsed = MessageContentSchema.safeParse(event.content);
  if (!parsed.success) return { type: "ignore", reason: "malformed message content" };
  const content = parsed.data;
  if (content["m.relates_to"]?.rel_type === "m.replace") {
    const target = content["m.relates_to"].event_id;
    const fresh = MessageContentSchema.safeParse(content["m.new_content"]);
    if (!target || !fresh.success) return { type: "ignore", reason: "malformed edit" };
    return { type: "edit", target, text: fresh.data.body };
  }
  if (content["m.new_content"] !== undefined)
    return { type: "ignore", reason: "an edit without its relation" };
  switch (content.msgtype) {
    case "m.notice":
      return { type: "ignore", reason: "notices come from bots" };
    case "m.text":
    case "m.emote": {
      const reply = content["m.relates_to"]?.["m.in_reply_to"] !== undefined;
      const text = reply ? stripReplyFallback(content.body) : content.body;
      return { type: "message", text, ...placementOf(content) };
    }
    case "m.file":
    case "m.image":
    case "m.audio":
    case "m.video":
      return classifyFile(content, maxFileBytes);
    default:
      return { type: "ignore", reason: `message type ${content.msgtype} is not handled` };
  }
}

/**
 * Decides what a room event is: the bot's own events and other bots' notices are
 * ignored; encryption of any kind is flagged; messages, keycap reactions and files
 * are read out with the thread and reply they belong to.
 */
export function classifyEvent(event: RoomEvent, context: ClassifyContext): Classified {
  if (event.sender === context.botUserId) return { type: "ignore", reason: "own event" };
  if (event.type === "m.room.encrypted") return { type: "encrypted" };
  if (event.type === "m.room.encryption" && event.state_key === "") return { type: "encrypted" };
  if (event.type === "m.room.power_levels" && event.state_key === "") {
    const levels = PowerLevelsSchema.safeParse(event.content);
    return levels.success
      ? { type: "power-levels", levels: levels.data }
      : { type: "ignore", reason: "bad levels" };
  }
  if (event.type === "m.reaction") {
    const relates = RelatesToSchema.safeParse(event.content["m.relates_to"]);
    if (!relates.success || relates.data.rel_type !== "m.annotation" || !relates.data.event_id) {
      return { type: "ignore", reason: "not an annotation" };
    }
    const number = keycapNumber(relates.data.key ?? "");
    if (number === undefined) return { type: "ignore", reason: "not a keycap reaction" };
    return { type: "reaction", target: relates.data.event_id, number };
  }
  if (event.type !== "m.room.message") return { type: "ignore", reason: `event type ${event.type}` };
  return classifyMessage(event, context.maxFileBytes);
}
