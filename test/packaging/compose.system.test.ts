import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { feedDigest } from "../../src/demo/feed.js";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

/**
 * The compose file's services run without Docker: each service's command with the
 * same arguments and environment, adapted to this machine (service host names to
 * 127.0.0.1, container ports to free ones, mounted files to their source, the
 * Telegram API to the stand-in).
 */

interface Service {
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test: string[] };
}

const ALICE = { id: 7301, first_name: "Alice" };
const SECRETS = { REDIS_PASSWORD: "compose-test-password" } as Record<string, string>;
const CONTAINER_PORTS: Record<string, number> = { redis: 6379, demo: 8765 };

/** Docker compose's interpolation: `${VAR}`, `${VAR:-default}`, `${VAR:?error}`. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}/g,
    (_m, name: string, op, arg: string) => {
      const value = env[name];
      if (value !== undefined && value !== "") return value;
      if (op === "-") return arg;
      throw new Error(`compose: ${name} is not set (${arg})`);
    },
  );
}

let standin: TelegramApiStandin;
let bot: StandinBot;
let services: Record<string, Service>;
let entrypoint: string[];
const ports: Record<string, number> = {};
const health: Record<string, number> = {};
/** Each roomgate service's environment as run here, and the files mounted into its container. */
const envOf: Record<string, Record<string, string>> = {};
const mounted = new Map<string, string>();
const running = new Map<string, ChildProcess>();
const output = new Map<string, string>();

function adapt(value: string): string {
  let out = value;
  for (const [name, port] of Object.entries(CONTAINER_PORTS)) {
    out = out.split(`${name}:${port}`).join(`127.0.0.1:${ports[name]}`);
  }
  return out;
}

function run(name: string, argv: string[], env: Record<string, string>): ChildProcess {
  const [command, ...args] = argv;
  const child = spawn(command === "node" ? process.execPath : command!, args, {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  output.set(name, "");
  const collect = (d: Buffer) => output.set(name, output.get(name) + d.toString());
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  running.set(name, child);
  return child;
}

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot({ username: "compose_feed_bot" });
  const env = { ...SECRETS, TELEGRAM_FEED_TOKEN: bot.token, TELEGRAM_USER_ID: String(ALICE.id) };
  const compose = parse(interpolate(readFileSync("compose.yaml", "utf8"), env), { merge: true }) as {
    services: Record<string, Service>;
  };
  services = compose.services;
  const docker = readFileSync("Dockerfile", "utf8");
  entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(docker)![1]!) as string[];
  for (const name of Object.keys(CONTAINER_PORTS)) ports[name] = await freePort();

  const redis = services.redis!;
  const dir = mkdtempSync(join(tmpdir(), "rg-compose-redis-"));
  run("redis", [...redis.command!, "--port", String(ports.redis), "--bind", "127.0.0.1", "--dir", dir], {});
  const demo = services.demo!;
  const demoArgs = [...demo.entrypoint!, ...demo.command!].map((a) =>
    a === String(CONTAINER_PORTS.demo) ? String(ports.demo) : a === "0.0.0.0" ? "127.0.0.1" : a,
  );
  run("demo", demoArgs, demo.environment ?? {});
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${ports.demo}/healthz`).catch(() => null))?.ok === true,
    20_000,
    "the demo server",
  );

  for (const name of ["roomgate", "worker"]) {
    const service = services[name]!;
    health[name] = await freePort();
    const mounts = new Map(
      (service.volumes ?? []).map((v) => {
        const [source, target] = v.split(":");
        return [target!, source!] as const;
      }),
    );
    const args = [...(service.entrypoint ?? entrypoint), ...service.command!].map((a) => mounts.get(a) ?? a);
    const serviceEnv = Object.fromEntries(
      Object.entries(service.environment ?? {}).map(([k, v]) => [k, adapt(String(v))]),
    );
    for (const [target, source] of mounts) mounted.set(target, source);
    envOf[name] = {
      ...serviceEnv,
      TELEGRAM_API_ROOT: standin.url,
      HTTP_HOST: "127.0.0.1",
      HTTP_PORT: String(health[name]),
      ROOMGATE_STATE_DIR: mkdtempSync(join(tmpdir(), `rg-compose-${name}-`)),
    };
    run(name, args, envOf[name]);
  }
  await waitFor(() => standin.isPolling(bot.token), 30_000, "the bot to poll");
}, 90_000);

afterAll(async () => {
  const stopped = [...running.values()].map((child) =>
    child.exitCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once("exit", () => resolve())),
  );
  for (const name of ["worker", "roomgate", "demo", "redis"]) running.get(name)?.kill("SIGTERM");
  await Promise.all(stopped);
  await standin.close();
});

describe("compose.yaml's services, run without Docker", () => {
  it("starts Redis with AOF and a password, which roomgate accepts as persistent", () => {
    expect(services.redis!.command).toEqual(expect.arrayContaining(["--appendonly", "yes", "--requirepass"]));
    expect(output.get("roomgate")).not.toContain(SECRETS.REDIS_PASSWORD);
    expect(output.get("worker")).not.toContain(SECRETS.REDIS_PASSWORD);
  });

  it("answers a Telegram question from the remote demo namespace", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "what should I read today?" });
    await waitFor(() => standin.botMessages(bot.token, ALICE.id).length === 1, 30_000, "the answer");
    expect(standin.botMessages(bot.token, ALICE.id)[0]!.text).toContain(feedDigest().answer);
  });

  it("serves /healthz from both roomgate and the worker, as the image's HEALTHCHECK asks", async () => {
    const docker = readFileSync("Dockerfile", "utf8");
    // The image's own HEALTHCHECK, its config path mapped to the mounted file: it reads http.port there.
    const check = (JSON.parse(/^\s+CMD (\[.*\])$/m.exec(docker)![1]!) as string[]).map((a) =>
      a === "dist/cli/main.js" ? "bin/roomgate" : (mounted.get(a) ?? a),
    );
    for (const name of ["roomgate", "worker"]) {
      const body = (await (await fetch(`http://127.0.0.1:${health[name]}/healthz`)).json()) as Record<
        string,
        unknown
      >;
      expect(body, name).toMatchObject({ ok: true, redis: "up", status: "ok" });
      const probe = spawnSync(process.execPath, check.slice(1), { env: { ...process.env, ...envOf[name] } });
      expect(probe.status, `${name} HEALTHCHECK: ${String(probe.stdout)}${String(probe.stderr)}`).toBe(0);
    }
    const demoCheck = services
      .demo!.healthcheck!.test.slice(1)
      .map(adapt)
      .map((a) => a.replace(":8765/", `:${ports.demo}/`));
    expect(spawnSync(process.execPath, demoCheck.slice(1)).status, "demo healthcheck").toBe(0);
  });
});
