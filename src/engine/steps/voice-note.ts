import type { CallToolResult } from "@modelcontextprotocol/client";
import { FileFetchError, NamespaceError } from "../../core/errors.js";
import { fillArguments } from "../arguments.js";
import { say } from "../changes.js";
import { andThen, on, pass } from "../composer.js";
import { fileArgumentFor, fileArgumentValue } from "../file-arguments.js";
import { fileBytes, fileLimits, typeAllowed } from "../file-input.js";
import { fileTexts } from "../file-texts.js";

/**
 * A voice note in a room whose binding names a voice tool (`voice: { tool }`): the
 * tool turns it into text, the text is shown as heard, and the room's router is asked
 * with it as if typed. roomgate stays model-free: the text is the tool's.
 */
export const voiceNote = on("file", async (ctx, { file }) => {
  if (file.kind !== "voice" || file.rejected !== undefined || !ctx.voice) return pass();
  const { tool: name } = ctx.voice;
  const { types } = fileLimits(ctx);
  if (!typeAllowed(file.mime, types)) return [say(fileTexts.typeRefused(file, types))];
  const stt = ctx.voiceNamespace();
  const tool = stt ? (await stt.tools()).find((t) => t.name === name) : undefined;
  const arg = tool ? fileArgumentFor(tool.inputSchema, file) : undefined;
  if (!stt || !tool || !arg) {
    ctx.log.error({ tool: name, found: tool !== undefined }, "the voice tool is missing or takes no audio");
    return [say(fileTexts.voiceToolMissing(name))];
  }
  let bytes: Uint8Array;
  try {
    bytes = await fileBytes(ctx, file);
  } catch (err) {
    if (err instanceof FileFetchError) return [say(err.userText)];
    throw err;
  }
  const { args } = fillArguments(
    tool.inputSchema,
    { userId: ctx.event.sender.id, conversationId: ctx.session.conversationId, history: [] },
    { [arg.name]: fileArgumentValue(arg, tool.inputSchema, file, bytes) },
  );
  let result: CallToolResult;
  try {
    result = await stt.call(tool.name, args);
  } catch (err) {
    if (err instanceof NamespaceError) return [say(fileTexts.voiceFailed(name, err.userText))];
    throw err;
  }
  if (result.isError)
    return [say(fileTexts.voiceFailed(name, textOf(result) || "it answered with an error"))];
  const heard = transcriptOf(result).trim();
  if (heard === "") return [say(fileTexts.noWords)];
  return andThen(ctx, [say(fileTexts.heard(heard))], (next) => next.typed(heard));
});

/** The transcript: `structuredContent.text` (or `.transcript`), else the result's text content. */
function transcriptOf(result: CallToolResult): string {
  const structured = result.structuredContent as { text?: unknown; transcript?: unknown } | undefined;
  for (const value of [structured?.text, structured?.transcript]) if (typeof value === "string") return value;
  return textOf(result);
}

function textOf(result: CallToolResult): string {
  return result.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
}
