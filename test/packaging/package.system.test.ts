import { spawn, spawnSync, type SpawnSyncOptions } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  appendFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { E2eePeer } from "../support/matrix-e2ee-peer.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { TelegramApiStandin } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

// The package as a user gets it: packed with npm pack (dist/ as the system tier built
// it), installed with npm install -g into a scratch prefix, and run from there, outside
// the checkout, with its own HOME.
const root = mkdtempSync(join(tmpdir(), "roomgate-package-"));
const prefix = join(root, "prefix");
const home = join(root, "home");
const work = join(root, "work");
const version = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
// This Node first, for npm and for the installed bin's `#!/usr/bin/env node`.
const PATH = [join(prefix, "bin"), dirname(process.execPath), process.env.PATH].join(delimiter);
const env: NodeJS.ProcessEnv = { ...process.env, PATH, HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
delete env.REDIS_URL;
delete env.ROOMGATE_STATE_DIR;
delete env.XDG_STATE_HOME;

function run(command: string, args: string[], options: SpawnSyncOptions = {}) {
  const result = spawnSync(command, args, { env, encoding: "utf8", timeout: 240_000, ...options });
  return { status: result.status, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** As `run`, without blocking this process (where the stand-ins answer). */
function runAsync(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  const child = spawn(command, args, options);
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stdout += c.toString()));
  return new Promise<{ status: number | null; stdout: string }>((done) =>
    child.once("exit", (status) => done({ status, stdout })),
  );
}

let tarball: string;

beforeAll(() => {
  for (const dir of [prefix, home, work]) mkdirSync(dir, { recursive: true });
  const packed = run("npm", ["pack", "--json", "--pack-destination", root], {
    env: { ...env, HOME: process.env.HOME, ROOMGATE_PACK_PREBUILT: "1" },
  });
  expect(packed.status, packed.stderr).toBe(0);
  tarball = join(root, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  const installed = run(
    "npm",
    ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", tarball],
    // The user's npm cache (the checkout's install filled it): offline where it can be.
    { env: { ...env, HOME: process.env.HOME } },
  );
  expect(installed.status, installed.stderr).toBe(0);
}, 300_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the npm package", () => {
  it("holds what runs, and none of the tests, sources or benchmark", () => {
    const listed = run("tar", ["-tzf", tarball]).stdout.split("\n");
    expect(listed).toContain("package/bin/roomgate");
    expect(listed).toContain("package/dist/cli/main.js");
    expect(
      listed.some((f) => /^package\/dist\/.+\.lua$/.test(f)),
      "the Lua scripts beside the code",
    ).toBe(true);
    expect(listed).toContain("package/docs/routers.md");
    expect(listed).toContain("package/examples/roomgate.yaml");
    expect(listed).toContain("package/npm-shrinkwrap.json");
    expect(listed.filter((f) => /^package\/(test|src|bench)\//.test(f))).toEqual([]);
    expect(listed.filter((f) => f.endsWith(".map"))).toEqual([]);
  });

  it("installs a working roomgate: --version, init --yes, config check and the demo, from an empty folder", () => {
    const roomgate = join(prefix, "bin", "roomgate");
    expect(existsSync(roomgate)).toBe(true);
    expect(run(roomgate, ["--version"]).stdout.trim()).toBe(version);

    const init = run(roomgate, ["init", "--yes", "--users", "4401"], { cwd: work });
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toContain("Wrote roomgate.yaml and .env.");
    expect(init.stdout).toContain("roomgate doctor");
    // What the user does next: the token into .env; then the default path and .env are found.
    appendFileSync(join(work, ".env"), `TELEGRAM_TOKEN=123456789:${"A".repeat(35)}\n`);
    const check = run(roomgate, ["config", "check"], { cwd: work });
    expect(check.stdout).toBe(`${join(work, "roomgate.yaml")}: valid\n`);
    expect(check.status).toBe(0);

    const demo = run(roomgate, ["demo"], { cwd: work, input: "what should I read today?\n" });
    expect(demo.stdout).toContain("Today's digest: 3 items worth reading");
    expect(demo.status, demo.stderr).toBe(0);
    // An installed package keeps its state in the user's state home, not in its own folder.
    expect(readdirSync(join(home, ".local", "state", "roomgate"))).toContain("redis");
    // An operator's command prints its answer only: the embedded Redis's start goes to the log file.
    const letters = run(roomgate, ["dead-letters"], { cwd: work });
    expect(letters.stderr).toBe("");
    expect(letters.stdout).toBe("no dead letters\n");
    expect(letters.status).toBe(0);
  }, 120_000);
});

describe("the installed package's roomgate doctor and start, on the configuration init wrote", () => {
  it("doctor finds no problem; start answers on Telegram, and in an encrypted Matrix room (the crypto resolves outside the checkout)", async () => {
    const roomgate = join(prefix, "bin", "roomgate");
    const dir = join(root, "start");
    mkdirSync(dir, { recursive: true });
    const init = run(roomgate, ["init", "--yes", "--users", "4402"], { cwd: dir });
    expect(init.status, init.stderr).toBe(0);
    const telegram = await TelegramApiStandin.start();
    const hs = await MatrixHomeserverStandin.start();
    try {
      const bot = telegram.addBot();
      const mxBot = hs.registerUser("roomgate", "RGPACKAGE");
      const alice = hs.registerUser("alice").userId;
      const roomId = hs.createRoom(alice, { members: [mxBot.userId], encrypted: true });
      const peer = await E2eePeer.login(hs, alice, "ALICE1");
      // Only what a test must change: the stand-ins' addresses, a port nobody else uses,
      // and a Matrix room beside the bot init configured.
      const file = join(dir, "roomgate.yaml");
      const written = readFileSync(file, "utf8");
      expect(written).toContain("\ntelegram:\n");
      expect(written).toContain("port: 9464");
      writeFileSync(
        file,
        written
          .replace("\ntelegram:\n", `\ntelegram:\n  apiRoot: ${telegram.url}\n`)
          .replace("port: 9464", `port: ${await freePort()}`) +
          [
            "matrix:",
            `  homeserver: ${hs.url}`,
            "  accessToken: ${MATRIX_TOKEN}",
            "  storeKey: ${MATRIX_STORE_KEY}",
            "  rooms:",
            `    - { room: "${roomId}", namespace: feed, users: ["${alice}"], respond: all }`,
            "",
          ].join("\n"),
      );
      const secrets = {
        TELEGRAM_TOKEN: bot.token,
        MATRIX_TOKEN: mxBot.accessToken,
        MATRIX_STORE_KEY: "the package test's store key",
      };
      // The quick start's order: doctor first, then start. Not spawnSync: the stand-ins
      // answer from this process.
      const doctor = await runAsync(roomgate, ["doctor"], { cwd: dir, env: { ...env, ...secrets } });
      expect(doctor.stdout).toContain("No problems: roomgate start has what it needs.");
      expect(doctor.status, doctor.stdout).toBe(0);
      const child = spawn(roomgate, ["start"], { cwd: dir, env: { ...env, ...secrets } });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.stderr.on("data", (c: Buffer) => (out += c.toString()));
      const exited = new Promise<number | null>((done) => child.once("exit", done));
      try {
        await waitFor(() => telegram.isPolling(bot.token) || child.exitCode !== null, 60_000, "polling");
        expect(child.exitCode, out).toBeNull();
        telegram.userSends(bot.token, {
          from: { id: 4402, first_name: "Ann" },
          text: "what should I read today?",
        });
        await waitFor(() => telegram.botMessages(bot.token, 4402).length > 0, 30_000, "the Telegram answer");
        expect(telegram.botMessages(bot.token, 4402)[0]!.text).toContain(
          "Today's digest: 3 items worth reading",
        );

        await waitFor(() => out.includes("matrix receiver syncing"), 30_000, "the Matrix receiver");
        const asked = await peer.sendText(roomId, "what should I read today?");
        const reply = await hs.waitForEvent(
          roomId,
          (e) =>
            e.sender === mxBot.userId &&
            e.type === "m.room.encrypted" &&
            (e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.[
              "m.in_reply_to"
            ]?.event_id === asked.event_id,
          30_000,
        );
        expect(String((await peer.decrypt(reply))?.content.body)).toContain("Today's digest");
      } finally {
        child.kill("SIGTERM");
      }
      expect(await exited, out).toBe(0);
    } finally {
      await telegram.close();
      await hs.close();
    }
  }, 180_000);
});
