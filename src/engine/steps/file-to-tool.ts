import { FileFetchError } from "../../core/errors.js";
import type { InboundFile } from "../../core/event.js";
import type { ToolInfo } from "../../namespace/tool-info.js";
import { fillArguments } from "../arguments.js";
import { remember, say, type Change } from "../changes.js";
import { andThen, isPass, on, pass, type StepResult } from "../composer.js";
import {
  fileArgumentFor,
  fileArgumentValue,
  fileKindsOf,
  type FileArgument,
  type FileKind,
} from "../file-arguments.js";
import { fileBytes, fileLimits, typeAllowed } from "../file-input.js";
import { fileTexts } from "../file-texts.js";
import { callChecked, isEnabled } from "../tool-runner.js";
import type { TurnContext } from "../turn-context.js";
import { continueSlot, expireSlot, ownSlot } from "./slot.js";

/**
 * A photo, voice note, audio file or document goes to the tool the turn calls when
 * that tool's input schema takes it (an argument named or described as a file, image,
 * audio or URI, or an MCP content object): the argument a waiting tool asked for, the
 * router, or an enabled tool, in that order. The file is fetched only then. A type
 * the configuration does not let through, or a file no tool of the room takes, gets
 * one line saying what the room's tools accept. A text document no tool takes as a
 * file is left to the text-file step.
 */
export const fileToTool = on("file", async (ctx, { file }) => {
  // A slot that waited too long ends first, as for a typed message.
  const expired = expireSlot(ctx);
  const result = await decide(ctx.after(expired), file);
  return isPass(result) ? pass([...expired, ...result.pass]) : [...expired, ...result];
});

async function decide(ctx: TurnContext, file: InboundFile): Promise<StepResult> {
  if (file.rejected !== undefined) return pass();
  const { types } = fileLimits(ctx);
  // A document the adapter read as text (known by its name) is text, whatever type it was sent as.
  const mime = file.text !== undefined && !file.mime.startsWith("text/") ? "text/plain" : file.mime;
  if (!typeAllowed(mime, types)) return [say(fileTexts.typeRefused(file, types))];
  const tools = await ctx.namespace.tools();
  const slot = ownSlot(ctx);
  if (slot) {
    const tool = tools.find((t) => t.name === slot.tool);
    const arg = tool ? fileArgumentFor(onlyProperty(tool, slot.missing[0]!.name), file) : undefined;
    if (!tool || !arg) return pass();
    return withBytes(ctx, file, (bytes) => {
      const value = fileArgumentValue(arg, tool.inputSchema, file, bytes);
      return andThen(ctx, [remember("user", noted(file))], (next) =>
        continueSlot(next, slot, { ...slot.args, [arg.name]: value }, slot.missing.slice(1)),
      );
    });
  }
  const taker = takerOf(ctx, tools, file);
  if (!taker) {
    if (file.text !== undefined) return pass();
    // Only tools that would take this very file are offered; the rest are named as taking other kinds.
    const withFiles = tools
      .map((t) => ({
        name: t.name,
        kinds: fileKindsOf(t.inputSchema),
        fits: !!fileArgumentFor(t.inputSchema, file),
      }))
      .filter((t) => t.kinds.length > 0);
    const strip = ({ name, kinds }: { name: string; kinds: FileKind[] }) => ({ name, kinds });
    const takers = withFiles.filter((t) => t.fits).map(strip);
    const others = withFiles.filter((t) => !t.fits).map(strip);
    return [say(fileTexts.noTool(file, ctx.namespace.name, takers, others))];
  }
  return withBytes(ctx, file, (bytes) => callWithFile(ctx, taker.tool, taker.arg, file, bytes));
}

/** The router when it takes the file, else the best enabled tool that does. */
function takerOf(
  ctx: TurnContext,
  tools: ToolInfo[],
  file: InboundFile,
): { tool: ToolInfo; arg: FileArgument } | undefined {
  const router = tools.find((t) => t.name === ctx.namespace.askTool);
  const routerArg = router ? fileArgumentFor(router.inputSchema, file) : undefined;
  if (router && routerArg) return { tool: router, arg: routerArg };
  return tools
    .filter((t) => t.name !== ctx.namespace.askTool && isEnabled(ctx, t.name))
    .flatMap((tool) => {
      const arg = fileArgumentFor(tool.inputSchema, file);
      return arg ? [{ tool, arg }] : [];
    })
    .sort((a, b) => b.arg.score - a.arg.score)[0];
}

/** Calls the tool with the file in its argument and the caption as the question; other required arguments are asked for by name. */
async function callWithFile(
  ctx: TurnContext,
  tool: ToolInfo,
  arg: FileArgument,
  file: InboundFile,
  bytes: Uint8Array,
): Promise<Change[]> {
  const value = fileArgumentValue(arg, tool.inputSchema, file, bytes);
  const question = file.caption ?? "";
  const { args, missing } = fillArguments(
    tool.inputSchema,
    {
      question,
      userId: ctx.event.sender.id,
      conversationId: ctx.session.conversationId,
      history: [...ctx.history],
    },
    { [arg.name]: value, ...questionIfRequired(tool, question) },
  );
  // The file is not kept in the session for a later turn: what else the tool needs is asked for first.
  if (missing.length > 0)
    return [
      say(
        fileTexts.needsMore(
          file,
          tool.name,
          missing.map((m) => m.name),
        ),
      ),
    ];
  return andThen(ctx, [remember("user", noted(file))], (noted) => callChecked(noted, tool, args, question));
}

/** A required question-like argument gets the caption, even an empty one, so a file alone is enough. */
function questionIfRequired(tool: ToolInfo, question: string): Record<string, unknown> {
  const required = Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as string[]) : [];
  const name = ["question", "query", "q", "text", "prompt"].find((n) => required.includes(n));
  return name === undefined || question !== "" ? {} : { [name]: question };
}

async function withBytes(
  ctx: TurnContext,
  file: InboundFile,
  then: (bytes: Uint8Array) => Promise<readonly Change[]>,
): Promise<readonly Change[]> {
  let bytes: Uint8Array;
  try {
    bytes = await fileBytes(ctx, file);
  } catch (err) {
    if (err instanceof FileFetchError) {
      ctx.log.warn({ err, file: file.name }, "a file could not be fetched for a tool");
      return [say(err.userText)];
    }
    throw err;
  }
  return then(bytes);
}

/** A schema with only one of the tool's properties, to read how that argument takes a file. */
function onlyProperty(tool: ToolInfo, name: string): Record<string, unknown> {
  const props = (tool.inputSchema.properties ?? {}) as Record<string, unknown>;
  return { type: "object", properties: name in props ? { [name]: props[name] } : {} };
}

/** How the file is kept in the history: what it was and its caption. */
function noted(file: InboundFile): string {
  const caption = file.caption ? ` ${file.caption}` : "";
  return `[${file.kind ?? "file"} ${file.name}]${caption}`;
}
