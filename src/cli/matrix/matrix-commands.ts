import type { Command } from "commander";
import { loadConfig } from "../../core/config.js";
import { runMatrixSetup } from "./run-matrix-setup.js";
import { runMatrixTrust } from "./run-matrix-trust.js";
import { runMatrixVerify } from "./run-matrix-verify.js";

/** `roomgate matrix setup|verify|trust`: the bot's Matrix identity, for the operator (docs/matrix.md). */
export function registerMatrixCommands(program: Command): void {
  const matrix = program
    .command("matrix")
    .description("The Matrix bot's identity: cross-signing, recovery key, verification, trust");
  matrix
    .command("setup")
    .description(
      "Cross-sign the bot's device, set up secret storage and key backup; prints a new recovery key once",
    )
    .requiredOption("-c, --config <file>", "YAML configuration")
    .option("--reset", "replace the account's cross-signing identity and recovery key")
    .action(async (opts: { config: string; reset?: boolean }) => {
      process.exitCode = await runMatrixSetup({
        config: loadConfig(opts.config),
        reset: opts.reset === true,
      });
    });
  matrix
    .command("verify")
    .description(
      "Show the emoji of a person's verification of the bot and confirm them here (never automatic)",
    )
    .requiredOption("-c, --config <file>", "YAML configuration")
    .option("--wait <seconds>", "how long to wait for a verification to show its emoji", "300")
    .action(async (opts: { config: string; wait: string }) => {
      process.exitCode = await runMatrixVerify({
        config: loadConfig(opts.config),
        waitSeconds: Number(opts.wait),
      });
    });
  matrix
    .command("trust")
    .description("Approve a person's new identity after it changed, so the bot answers them again")
    .requiredOption("-c, --config <file>", "YAML configuration")
    .argument("<user>", "the Matrix user id, @alice:example.org")
    .action(async (user: string, opts: { config: string }) => {
      process.exitCode = await runMatrixTrust({ config: loadConfig(opts.config), user });
    });
}
