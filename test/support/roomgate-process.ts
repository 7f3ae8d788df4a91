import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";

/**
 * `roomgate start -c config.yaml` run as an operator runs it: the config written as
 * YAML to a scratch folder, secrets only in the environment, output collected so a
 * test can wait for log lines and check that no token leaks.
 */
export class RoomgateProcess {
  private text = "";

  private constructor(
    readonly child: ChildProcess,
    /** The YAML file the process was started with, for operator commands run beside it. */
    readonly configFile: string,
  ) {
    const collect = (chunk: Buffer) => (this.text += chunk.toString());
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
  }

  /**
   * Starts the process (`start`, or `worker` for workers only; `flags` after the
   * command, e.g. `--receive-only`). An inherited
   * `REDIS_URL` is dropped so the config (or `env`) decides which Redis it uses.
   */
  static start(
    config: Record<string, unknown>,
    env: Record<string, string> = {},
    command: "start" | "worker" = "start",
    flags: string[] = [],
  ): RoomgateProcess {
    const file = join(mkdtempSync(join(tmpdir(), "roomgate-start-")), "config.yaml");
    writeFileSync(file, stringify(config));
    const inherited: NodeJS.ProcessEnv = { ...process.env };
    delete inherited.REDIS_URL;
    const child = spawn(process.execPath, ["bin/roomgate", command, ...flags, "-c", file], {
      env: { ...inherited, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    return new RoomgateProcess(child, file);
  }

  /** Everything the process printed so far, stdout and stderr. */
  get output(): string {
    return this.text;
  }

  /** Sends SIGTERM and resolves with the exit code once the process has ended. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const exited = new Promise<number | null>((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGTERM");
    return exited;
  }

  /** Kills the process if it still runs (cleanup after a failed test). */
  kill(): void {
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}
