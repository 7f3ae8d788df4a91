import type { ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { Redis } from "ioredis";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { exited, killGroup, spawnTracked } from "./processes.js";

/**
 * A redis-server of the benchmark's own, append-only on, on a fixed free port, so
 * that it can be restarted mid-load on the same address with its data.
 */
export class RedisProcess {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly appendonly: boolean,
  ) {}

  /** Starts redis-server with its data in `dir`. */
  static async start(dir: string, options: { appendonly?: boolean } = {}): Promise<RedisProcess> {
    mkdirSync(dir, { recursive: true });
    const redis = new RedisProcess(await freePort(), dir, options.appendonly ?? true);
    await redis.run();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Stops it as an operator would (SIGTERM: the append-only file is flushed), then starts it again. */
  async restart(downMs: number): Promise<void> {
    await this.stop();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.run();
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    killGroup(child, "SIGTERM");
    await exited(child);
  }

  private async run(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--save", ""];
    args.push("--appendonly", this.appendonly ? "yes" : "no", "--loglevel", "warning");
    this.child = spawnTracked("redis-server", args, { stdio: "ignore" });
    const deadline = Date.now() + 15_000;
    for (;;) {
      const probe = new Redis(this.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on("error", () => undefined);
      try {
        await probe.connect();
        // Loading the append-only file answers LOADING until done.
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${this.port}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}
