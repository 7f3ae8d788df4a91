import type { InboundFile } from "../core/event.js";

/** What a file argument holds: any file, or only images, or only audio. */
export type FileKind = "image" | "audio" | "any";

/** A tool argument that takes a file, and how its value is written. */
export interface FileArgument {
  name: string;
  kind: FileKind;
  /** `data-uri`: `data:<mime>;base64,…`; `base64`: the bytes only; `content`: an MCP content object. */
  encoding: "data-uri" | "base64" | "content";
  /** How surely the argument means a file: a word for the kind, "file" and "uri" each add. */
  score: number;
}

interface Property {
  type?: string | string[];
  description?: string;
  format?: string;
  contentEncoding?: string;
  contentMediaType?: string;
  properties?: Record<string, Property>;
  enum?: unknown[];
}

const IMAGE = /\b(image|images|photo|photos|picture|pictures|img|screenshot)\b/;
const AUDIO = /\b(audio|voice|sound|speech|recording)\b/;
const FILE = /\b(file|files|attachment|attachments|document|blob|binary|media)\b/;
const URI = /\b(uri|url|urls|uris)\b/;
const URI_FORMATS = new Set(["uri", "uri-reference", "iri", "iri-reference"]);

function properties(schema: Record<string, unknown>): Record<string, Property> {
  const props = schema.properties;
  return props && typeof props === "object" ? (props as Record<string, Property>) : {};
}

function typeOf(prop: Property): string | undefined {
  const t = prop.type;
  return Array.isArray(t) ? t.find((x) => x !== "null") : t;
}

/** An MCP content-like object: `{ data, mimeType }` (ImageContent, AudioContent), perhaps with `type`. */
function isContentObject(prop: Property): boolean {
  const inner = prop.properties ?? {};
  return typeOf(prop) === "object" && "data" in inner && "mimeType" in inner;
}

/** Arguments about a file rather than holding it: its name, title, path or id. */
const ABOUT_A_FILE = /^(name|file_?name|title|path|file_?path|id|file_?id|mime_?type|type)$/i;

/** How one property takes a file, if it does: read from its name, description, format and shape. */
export function fileArgumentOf(name: string, prop: Property): FileArgument | undefined {
  if (ABOUT_A_FILE.test(name)) return undefined;
  const words =
    `${name.replace(/[_-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2")} ${prop.description ?? ""}`.toLowerCase();
  const image = IMAGE.test(words) || prop.contentMediaType?.startsWith("image/") === true;
  const audio = AUDIO.test(words) || prop.contentMediaType?.startsWith("audio/") === true;
  const file = FILE.test(words);
  const uri = URI.test(words) || URI_FORMATS.has(prop.format ?? "");
  const kind: FileKind = image && !audio && !file ? "image" : audio && !image && !file ? "audio" : "any";
  // Each sign adds up: "a data URI of the file" is surer than "the file" or "a URL".
  const score = (image || audio ? 3 : 0) + (file ? 2 : 0) + (uri ? 1 : 0);
  if (isContentObject(prop)) return { name, kind, encoding: "content", score: score + 2 };
  if (typeOf(prop) !== "string" || score === 0) return undefined;
  const encoding =
    prop.contentEncoding === "base64" || (/\bbase ?64\b/.test(words) && !uri) ? "base64" : "data-uri";
  return { name, kind, encoding, score };
}

/** What kind of file a person's file is, for matching it to an argument. */
export function kindOfFile(file: InboundFile): "image" | "audio" | "other" {
  if (file.kind === "photo" || file.mime.startsWith("image/")) return "image";
  if (file.kind === "voice" || file.kind === "audio" || file.mime.startsWith("audio/")) return "audio";
  return "other";
}

/** Whether an argument of this kind can take the file (an image argument takes no voice note). */
export function fits(arg: FileArgument, file: InboundFile): boolean {
  const kind = kindOfFile(file);
  return arg.kind === "any" || arg.kind === kind;
}

/** The tool argument that best takes the file, if any: the surest match of a fitting kind. */
export function fileArgumentFor(
  inputSchema: Record<string, unknown>,
  file: InboundFile,
): FileArgument | undefined {
  const args = Object.entries(properties(inputSchema))
    .map(([name, prop]) => fileArgumentOf(name, prop))
    .filter((a): a is FileArgument => a !== undefined && fits(a, file));
  return args.sort((a, b) => b.score - a.score)[0];
}

/** The kinds of file a tool takes (for the line saying what a room's tools accept). */
export function fileKindsOf(inputSchema: Record<string, unknown>): FileKind[] {
  const kinds = Object.entries(properties(inputSchema))
    .map(([name, prop]) => fileArgumentOf(name, prop)?.kind)
    .filter((k): k is FileKind => k !== undefined);
  return [...new Set(kinds)];
}

/** The argument's value for the file's bytes, written as the argument expects. */
export function fileArgumentValue(
  arg: FileArgument,
  inputSchema: Record<string, unknown>,
  file: InboundFile,
  bytes: Uint8Array,
): unknown {
  const data = Buffer.from(bytes).toString("base64");
  if (arg.encoding === "base64") return data;
  if (arg.encoding === "data-uri") return `data:${file.mime};base64,${data}`;
  const inner = properties(inputSchema)[arg.name]?.properties ?? {};
  const kind = kindOfFile(file);
  return {
    ...("type" in inner
      ? { type: kind === "image" ? "image" : kind === "audio" ? "audio" : "resource" }
      : {}),
    data,
    mimeType: file.mime,
    ...("name" in inner ? { name: file.name } : {}),
    ...("filename" in inner ? { filename: file.name } : {}),
  };
}
