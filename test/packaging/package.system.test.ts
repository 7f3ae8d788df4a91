import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  appendFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

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
  }, 120_000);
});
