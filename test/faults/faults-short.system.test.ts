import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

interface ScenarioRow {
  scenario: string;
  transport: string;
  turns: number;
  delivered: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  chatGapViolations: number;
  botRateViolations: number;
  groupRateViolations: number;
  bystanderErrors: number;
  passed: boolean;
}

/** Runs the shipped fault script as an operator would and reads its summary line. */
function runFaults(args: string[]): Promise<{ code: number | null; rows: ScenarioRow[]; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "bench/faults/run-faults.ts", ...args, "--json"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.once("exit", (code) => {
      const line = output.split("\n").find((l) => l.startsWith("FAULTS_JSON "));
      resolve({ code, rows: line ? (JSON.parse(line.slice(12)) as ScenarioRow[]) : [], output });
    });
  });
}

describe("npm run test:faults, short", () => {
  it("answers 200 turns over 10 chats exactly once and in order while the namespace child crashes", async () => {
    const { code, rows, output } = await runFaults([
      "--scenario",
      "namespace",
      "--turns",
      "200",
      "--chats",
      "10",
      "--groups",
      "1",
      // One message a second per chat on average, the per-chat limit: the limiter is
      // exercised without a backlog that would make this run long on a loaded box.
      "--rate",
      "10",
      "--drain-timeout",
      "30",
    ]);
    expect(rows, output).toHaveLength(1);
    const [row] = rows;
    expect(row!.turns).toBeGreaterThanOrEqual(200);
    expect(row!.delivered).toBe(row!.turns);
    expect([row!.lost, row!.duplicated, row!.outOfOrder]).toEqual([0, 0, 0]);
    expect([row!.chatGapViolations, row!.botRateViolations, row!.groupRateViolations]).toEqual([0, 0, 0]);
    // Nobody else got an error line while the child was down.
    expect(row!.bystanderErrors).toBe(0);
    expect(code, output).toBe(0);
  }, 120_000);

  it("takes updates through the webhook, as Telegram posts them, exactly once and in order", async () => {
    // About 60 turns over 6 chats at 10/s (58: each chat its share, rounded; about 15 s in all): the same checks with the
    // stand-in posting each update to `start`'s webhook (secret token, one at a time,
    // again until answered 2xx) instead of serving getUpdates.
    const { code, rows, output } = await runFaults([
      "--transport",
      "webhook",
      "--scenario",
      "namespace",
      "--turns",
      "60",
      "--chats",
      "6",
      "--groups",
      "1",
      "--rate",
      "10",
      "--drain-timeout",
      "30",
    ]);
    expect(rows, output).toHaveLength(1);
    const [row] = rows;
    expect(row!.transport).toBe("webhook");
    expect(row!.turns).toBeGreaterThanOrEqual(55);
    expect(row!.delivered).toBe(row!.turns);
    expect([row!.lost, row!.duplicated, row!.outOfOrder]).toEqual([0, 0, 0]);
    expect([row!.chatGapViolations, row!.botRateViolations, row!.groupRateViolations]).toEqual([0, 0, 0]);
    expect(row!.bystanderErrors).toBe(0);
    expect(code, output).toBe(0);
  }, 90_000);
});
