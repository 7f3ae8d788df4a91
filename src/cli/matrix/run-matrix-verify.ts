import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../../core/config.js";
import { VerificationBoard, type VerificationEntry } from "../../matrix/crypto/verification-board.js";
import { askYes } from "./prompt.js";
import { withMatrixCli } from "./matrix-cli.js";

/** What `roomgate matrix verify` needs; `confirm` asks the operator (default: on the terminal). */
export interface MatrixVerifyOptions {
  config: Config;
  waitSeconds: number;
  out?: NodeJS.WritableStream;
  confirm?: (entry: VerificationEntry) => Promise<boolean>;
  pollMs?: number;
}

/** The emoji and decimals as a person compares them with their screen. */
export function describeSas(entry: VerificationEntry): string {
  const emoji = (entry.emoji ?? []).map((e) => `${e.symbol} ${e.description}`).join("   ");
  return [
    `${entry.userId}${entry.deviceId ? ` (session ${entry.deviceId})` : ""} is verifying the bot. They should see:`,
    "",
    `  ${emoji}`,
    `  ${(entry.decimals ?? []).join(" ")}`,
    "",
  ].join("\n");
}

/**
 * `roomgate matrix verify`: waits for a person's verification of the bot to reach its
 * emoji (the device's owner shows them through Redis), prints the emoji and decimals,
 * and asks the operator whether they match what the person sees; the answer goes back
 * to the owner, which confirms or cancels. Then it waits for the outcome.
 */
export async function runMatrixVerify(options: MatrixVerifyOptions): Promise<number> {
  const out = options.out ?? process.stdout;
  const pollMs = options.pollMs ?? 500;
  return withMatrixCli(options.config, async ({ redis, keys, userId }) => {
    const board = new VerificationBoard(
      redis,
      keys.matrixOperator(userId, "verify"),
      keys.matrixOperator(userId, "verify-answers"),
    );
    const deadline = Date.now() + options.waitSeconds * 1000;
    let announced = false;
    let entry: VerificationEntry | undefined;
    while (!entry && Date.now() < deadline) {
      const listed = await board.list();
      entry = listed.find((e) => e.state === "emoji");
      if (!entry && !announced) {
        const waiting = listed.find((e) => e.state === "requested");
        out.write(
          waiting
            ? `${waiting.userId} asked to verify the bot; waiting for them to start comparing emoji…\n`
            : "Waiting for someone to verify the bot (in Element: the bot's profile → Verify)…\n",
        );
        announced = true;
      }
      if (!entry) await sleep(pollMs);
    }
    if (!entry) {
      out.write("No verification reached its emoji in time.\n");
      return 1;
    }
    out.write(describeSas(entry));
    const match = await (options.confirm ?? ((e) => askYes(`Do they match what ${e.userId} sees? [y/N] `)))(
      entry,
    );
    await board.answer(entry.flowId, match ? "confirm" : "cancel");
    if (!match) {
      out.write("Cancelled: the bot told them the emoji do not match.\n");
      return 1;
    }
    while (Date.now() < deadline) {
      const now = (await board.list()).find((e) => e.flowId === entry.flowId);
      if (now?.state === "done") {
        out.write(`Verified: ${entry.userId} and the bot now trust each other's devices.\n`);
        return 0;
      }
      if (now?.state === "cancelled") {
        out.write(`The verification was cancelled (${now.reason ?? "no reason given"}).\n`);
        return 1;
      }
      await sleep(pollMs);
    }
    out.write("Confirmed here; the other side has not finished yet.\n");
    return 1;
  });
}
