import type { CallToolResult } from "@modelcontextprotocol/client";
import type { Attachment } from "../core/attachment.js";
import type { Block } from "../core/reply.js";
import { contentTexts } from "./content-texts.js";

/** Text output longer than this (about three Telegram messages) is attached as a file. */
export const LONG_TEXT_CHARS = 12_000;
/** How much of an attached text output is shown inline. */
const PREVIEW_LINES = 15;
const PREVIEW_CHARS = 1_500;

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "application/pdf": "pdf",
  "application/json": "json",
  "application/gzip": "gz",
  "text/plain": "txt",
};

function fileName(base: string, mime: string): string {
  return `${base}.${EXTENSIONS[mime.toLowerCase()] ?? "bin"}`;
}

/** The last path segment of a URI, when it looks like a file name. */
function uriName(uri: string): string | undefined {
  const last = uri.split(/[/\\]/).filter(Boolean).at(-1);
  return last && /^[\w.-]{1,100}$/.test(last) ? last : undefined;
}

/** The first lines of a long text, cut at a line (or, for one huge line, at a code point). */
function preview(text: string): string {
  const lines = text.split("\n").slice(0, PREVIEW_LINES);
  let out = "";
  for (const line of lines) {
    if (out.length + line.length + 1 > PREVIEW_CHARS) break;
    out += (out ? "\n" : "") + line;
  }
  return out || [...text].slice(0, PREVIEW_CHARS).join("");
}

/** What a non-Answer tool result shows: blocks in order, and the files it carries. */
export interface ContentView {
  blocks: Block[];
  attachments: Attachment[];
}

/**
 * Shows each MCP content type in the room's own media (DESIGN §6a): text verbatim and
 * monospace (attached as a .txt with its first lines shown when long), images as
 * photos, audio and blobs as files, resource links as links (http/https) or plain
 * URIs, embedded text resources monospace under their URI.
 */
export function contentView(tool: string, result: CallToolResult): ContentView {
  const blocks: Block[] = [];
  const attachments: Attachment[] = [];
  const texts: string[] = [];
  const base = tool.replace(/[^\w.-]+/g, "_");
  let n = 0;
  for (const item of result.content ?? []) {
    n += 1;
    switch (item.type) {
      case "text":
        texts.push(item.text);
        break;
      case "image":
        attachments.push({
          kind: "image",
          name: fileName(`${base}-${n}`, item.mimeType),
          mime: item.mimeType,
          data: item.data,
        });
        break;
      case "audio":
        attachments.push({
          kind: "file",
          name: fileName(`${base}-${n}`, item.mimeType),
          mime: item.mimeType,
          data: item.data,
        });
        break;
      case "resource_link":
        blocks.push({ type: "text", text: contentTexts.link(item.name, item.uri, item.description) });
        break;
      case "resource": {
        const r = item.resource;
        const mime = r.mimeType ?? ("text" in r ? "text/plain" : "application/octet-stream");
        if ("text" in r && typeof r.text === "string") {
          blocks.push({ type: "text", text: contentTexts.embedded(r.uri, r.mimeType) });
          blocks.push({ type: "code", text: r.text });
        } else if ("blob" in r && typeof r.blob === "string") {
          attachments.push({
            kind: "file",
            name: uriName(r.uri) ?? fileName(`${base}-${n}`, mime),
            mime,
            data: r.blob,
          });
          blocks.push({ type: "text", text: contentTexts.embeddedFile(r.uri) });
        }
        break;
      }
    }
  }
  const text = texts.join("\n");
  if (text.length > LONG_TEXT_CHARS) {
    const name = `${base}.txt`;
    attachments.unshift({
      kind: "file",
      name,
      mime: "text/plain",
      data: Buffer.from(text, "utf8").toString("base64"),
    });
    blocks.unshift(
      { type: "code", text: preview(text) },
      { type: "text", text: contentTexts.attachedText(name, text.length, text.split("\n").length) },
    );
  } else if (text !== "") {
    blocks.unshift({ type: "code", text });
  }
  if (blocks.length === 0 && attachments.length === 0)
    blocks.push({ type: "text", text: contentTexts.nothing(tool) });
  return { blocks, attachments };
}
