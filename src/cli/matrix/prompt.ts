import { createInterface } from "node:readline";

/**
 * Asks for a secret on the terminal without echoing it; from a pipe, reads one line.
 * Resolves to undefined when there is no input at all.
 */
export async function askHidden(question: string): Promise<string | undefined> {
  const input = process.stdin;
  process.stderr.write(question);
  if (!input.isTTY) {
    const rl = createInterface({ input });
    for await (const line of rl) {
      rl.close();
      return line;
    }
    return undefined;
  }
  input.setRawMode(true);
  input.resume();
  let typed = "";
  try {
    return await new Promise<string | undefined>((resolve) => {
      const onData = (chunk: Buffer): void => {
        for (const ch of chunk.toString("utf8")) {
          if (ch === "\r" || ch === "\n") {
            input.off("data", onData);
            return resolve(typed);
          }
          if (ch === "\u0003" || ch === "\u0004") {
            input.off("data", onData);
            return resolve(undefined);
          }
          typed = ch === "\u007f" ? typed.slice(0, -1) : typed + ch;
        }
      };
      input.on("data", onData);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
    process.stderr.write("\n");
  }
}

/**
 * Asks a yes/no question on the terminal; only "y" or "yes" is yes. Input that ends
 * unanswered (a closed pipe, Ctrl-D) is no, rather than a prompt waiting for ever.
 */
export async function askYes(
  question: string,
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Promise<boolean> {
  const rl = createInterface({ input, output });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.once("close", () => resolve(""));
      rl.question(question, resolve);
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
