import type { Message } from "grammy/types";
import type { InboundFile } from "../core/event.js";
import { edgeTexts } from "../edge/edge-texts.js";

/** Media that is never taken, with the name a person knows it by. */
export const OTHER_MEDIA = [
  ["video", "Videos"],
  ["video_note", "Video messages"],
  ["animation", "Animations"],
  ["sticker", "Stickers"],
] as const;

/**
 * A photo, voice note or audio file, left on Telegram for the worker to fetch when a
 * tool takes it. Of a photo's sizes the largest within the cap is taken; one over the
 * cap in every size is refused here, on Telegram's word, before anything is fetched.
 */
export function takenMedia(msg: Message, maxBytes: number): InboundFile | undefined {
  const pick = (
    base: { name: string; mime: string; kind: NonNullable<InboundFile["kind"]> },
    f: { file_id: string; file_size?: number },
  ): InboundFile => {
    const size = f.file_size ?? 0;
    return size > maxBytes
      ? { ...base, size, rejected: edgeTexts.fileTooLarge(base.name, size, maxBytes) }
      : { ...base, size, ref: f.file_id };
  };
  if (msg.photo && msg.photo.length > 0) {
    const within = msg.photo.filter((p) => (p.file_size ?? 0) <= maxBytes).at(-1) ?? msg.photo.at(-1)!;
    return pick({ name: "photo.jpg", mime: "image/jpeg", kind: "photo" }, within);
  }
  if (msg.voice)
    return pick({ name: "voice.ogg", mime: msg.voice.mime_type ?? "audio/ogg", kind: "voice" }, msg.voice);
  if (msg.audio) {
    const a = msg.audio;
    return pick({ name: a.file_name ?? "audio", mime: a.mime_type ?? "audio/mpeg", kind: "audio" }, a);
  }
  return undefined;
}

/** Media that is never taken (a video, a sticker): the line saying so. */
export function refusedMedia(msg: Message, field: string, what: string): InboundFile {
  const file = msg.video ?? msg.animation ?? msg.video_note;
  const size = file?.file_size ?? 0;
  return {
    name: field,
    mime: "application/octet-stream",
    size,
    rejected: `${what} are not accepted. Send your message as text, a photo, a voice note or a file.`,
  };
}
