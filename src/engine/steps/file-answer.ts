import { remember, say } from "../changes.js";
import { andThen, on } from "../composer.js";
import { texts } from "../texts.js";
import { continueSlot, expireSlot, ownSlot } from "./slot.js";

/**
 * A text file no tool takes as a file is taken only as the argument a tool is waiting
 * for; one refused at the edge (too large, too slow) is said so first.
 */
export const fileAnswer = on("file", (ctx, { file }) =>
  andThen(ctx, expireSlot(ctx), async (next) => {
    if (file.rejected !== undefined) return [say(texts.fileRejected(file.rejected))];
    const slot = ownSlot(next);
    if (!slot) return [say(texts.fileNotExpected)];
    const [arg, ...rest] = slot.missing;
    if (arg!.type !== undefined && arg!.type !== "string") {
      return [say(texts.fileWrongArgument(arg!.name, arg!.type))];
    }
    if (file.text === undefined) {
      const why =
        file.ref !== undefined ? `"${file.name}" is not a text file` : "it could not be read as text";
      return [say(texts.fileRejected(why))];
    }
    return andThen(next, [remember("user", `[file ${file.name}]`)], (remembered) =>
      continueSlot(remembered, slot, { ...slot.args, [arg!.name]: file.text }, rest),
    );
  }),
);
