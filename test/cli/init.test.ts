import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { runInit } from "../../src/cli/run-init.js";
import { checkConfigText } from "../../src/core/config.js";

function output() {
  const out = new PassThrough();
  let text = "";
  out.on("data", (c: Buffer) => (text += c.toString()));
  return { out, text: () => text };
}

describe("roomgate init", () => {
  it("asks, one answer a line, and writes a configuration that validates once the token is in the environment", async () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-init-"));
    const config = join(dir, "roomgate.yaml");
    const { out, text } = output();
    // platform, token variable, namespace, its server (the demo), who may talk
    const input = Readable.from(["telegram\n", "FEED_BOT_TOKEN\n", "runs\n", "\n", "4401, 4402\n"]);
    expect(await runInit({ config, input, output: out })).toBe(0);
    const yaml = readFileSync(config, "utf8");
    expect(yaml).toContain("token: ${FEED_BOT_TOKEN}");
    expect(yaml).toContain("ATTEST_TOOLS: runs");
    const report = checkConfigText(yaml, { FEED_BOT_TOKEN: `123456789:${"A".repeat(35)}` });
    expect(report.errors).toEqual([]);
    expect(report.config?.telegram?.bots[0]?.users).toEqual([4401, 4402]);
    const env = readFileSync(join(dir, ".env"), "utf8");
    expect(env).toMatch(/^FEED_BOT_TOKEN=$/m);
    expect(env).toContain("# LOG_LEVEL=info");
    expect(statSync(join(dir, ".env")).mode & 0o777).toBe(0o600);
    // Answers from a pipe are shown after their questions, one question a line.
    expect(text()).toContain("Platform (telegram or matrix) [telegram]: telegram\n");
    expect(text()).toContain("[the bundled demo]: \n");
    expect(text()).toContain(`roomgate doctor -c ${config}`);
  });

  it("with --yes and no users says how to pair, and keeps existing files unless --force", async () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-init-"));
    const config = join(dir, "roomgate.yaml");
    const first = output();
    await runInit({ config, yes: true, output: first.out });
    expect(first.text()).toContain(`roomgate pair -c ${config} --binding feed`);
    expect(readFileSync(config, "utf8")).toContain("users: []");
    await expect(runInit({ config, yes: true, output: output().out })).rejects.toThrow(
      /exists already; keep it, or run init with --force/,
    );
    await runInit({ config, yes: true, force: true, namespace: "kg", output: output().out });
    expect(readFileSync(config, "utf8")).toContain("ATTEST_TOOLS: kg");
  });

  it("writes a Matrix configuration with its store key, and a server given by URL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-init-"));
    const config = join(dir, "roomgate.yaml");
    await runInit({
      config,
      yes: true,
      platform: "matrix",
      homeserver: "https://matrix.example.org",
      room: "!ops:example.org",
      namespace: "notes",
      url: "http://127.0.0.1:8765/mcp",
      users: "@alice:example.org",
      output: output().out,
    });
    const yaml = readFileSync(config, "utf8");
    const report = checkConfigText(yaml, {
      MATRIX_TOKEN: "syt_a_matrix_access_token",
      MATRIX_STORE_KEY: "k".repeat(32),
    });
    expect(report.errors).toEqual([]);
    expect(report.config?.namespaces.notes?.url).toBe("http://127.0.0.1:8765/mcp");
    expect(report.config?.matrix?.rooms[0]?.users).toEqual(["@alice:example.org"]);
    expect(readFileSync(join(dir, ".env"), "utf8")).toMatch(/^MATRIX_STORE_KEY=$/m);
  });

  it("refuses what could not work, writing nothing: a Telegram user that is not a number, a namespace without a server", async () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-init-"));
    const config = join(dir, "roomgate.yaml");
    await expect(runInit({ config, yes: true, users: "@me", output: output().out })).rejects.toThrow(
      /Telegram user ids are numbers, not "@me"/,
    );
    await expect(runInit({ config, yes: true, namespace: "notes", output: output().out })).rejects.toThrow(
      /namespace "notes" needs its server: --command "…" or --url URL/,
    );
    expect(existsSync(config)).toBe(false);
  });
});
