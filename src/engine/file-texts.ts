import type { InboundFile } from "../core/event.js";
import type { FileKind } from "./file-arguments.js";

/** What a person calls the file they sent. */
function what(file: InboundFile): string {
  switch (file.kind) {
    case "photo":
      return "photo";
    case "voice":
      return "voice note";
    case "audio":
      return "audio file";
    default:
      return `file "${file.name}"`;
  }
}

const KIND_NAMES: Record<FileKind, string> = { image: "images", audio: "audio", any: "files" };

/** What the file is, as a kind of file a tool takes. */
function kindOf(file: InboundFile): string {
  if (file.kind === "photo" || file.mime.startsWith("image/")) return "images";
  if (file.kind === "voice" || file.kind === "audio" || file.mime.startsWith("audio/")) return "audio";
  return `${file.mime} files`;
}

/** The bot's lines about files passed to tools: user-facing text only. */
export const fileTexts = {
  /** A file whose type the configuration does not let through. */
  typeRefused: (file: InboundFile, types: readonly string[]) =>
    `This ${what(file)} (${file.mime}) was not passed on: this bot takes ${types.join(", ")}.`,
  /**
   * No tool of the room takes the file: which of the agent's tools would (and how to
   * enable them), or that none does.
   */
  noTool: (
    file: InboundFile,
    namespace: string,
    takers: { name: string; kinds: FileKind[] }[],
    others: { name: string; kinds: FileKind[] }[],
  ) => {
    const listed = (tools: { name: string; kinds: FileKind[] }[]) =>
      tools.map((t) => `${t.name} (${t.kinds.map((k) => KIND_NAMES[k]).join(", ")})`).join(", ");
    if (takers.length > 0) {
      return `This ${what(file)} was not passed on: no tool enabled in this room takes it. ${listed(takers)} would: send /tools to enable it, then send the ${what(file)} again.`;
    }
    if (others.length > 0) {
      const takes = others.map((t) => `${t.name} takes ${t.kinds.map((k) => KIND_NAMES[k]).join(", ")}`);
      return `This ${what(file)} was not passed on: no tool of the ${namespace} agent takes ${kindOf(file)} (${takes.join("; ")}). Send your question as text.`;
    }
    return `This ${what(file)} was not passed on: no tool of the ${namespace} agent takes files. Send your question as text.`;
  },
  /** The chosen tool needs more than the file. */
  needsMore: (file: InboundFile, tool: string, missing: string[]) =>
    `${tool} takes this ${what(file)} but also needs ${missing.join(", ")}: use /call ${tool} with them, then send the ${what(file)} again.`,
  /** The room's voice tool is not there, or takes no audio. */
  voiceToolMissing: (tool: string) =>
    `The voice note could not be turned into text: the voice tool ${tool} is not available. Send your question as text.`,
  /** The voice tool failed or heard nothing. */
  voiceFailed: (tool: string, why: string) =>
    `The voice note could not be turned into text (${tool}: ${why}).`,
  noWords: "No words could be made out in the voice note. Send it again, or as text.",
  /** The transcript shown before the answer, verbatim. */
  heard: (text: string) => `🎤 ${text}`,
} as const;
