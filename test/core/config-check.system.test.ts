import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkConfigText, parseConfig } from "../../src/core/config.js";
import type { ConfigError } from "../../src/core/errors.js";

const namespaces = `
namespaces:
  feed:
    command: [node, dist/demo/main.js]
  runs:
    url: http://127.0.0.1:8765/mcp
`;

function errorsOf(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  return checkConfigText(text, env).errors.map((e) => `${e.path}: ${e.message}`);
}

describe("configuration mistakes are all reported, with full paths", () => {
  it("names an unknown key with the key it was probably meant to be", () => {
    const text = `redis:\n  prefx: rg\nhtp: { port: 1 }\n${namespaces}telegram:\n  bots:\n    - token: "1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n      namespace: feed\n      user: [5]\n`;
    const errors = errorsOf(text);
    expect(errors).toEqual([
      'redis.prefx: unknown key (did you mean "prefix"?)',
      'htp: unknown key (did you mean "http"?)',
      'telegram.bots[0].user: unknown key (did you mean "users"?)',
    ]);
  });

  it("lists the known keys when nothing is close", () => {
    expect(errorsOf(`${namespaces}sessions:\n  zzzzzz: 1\n`)).toEqual([
      "sessions.zzzzzz: unknown key (known keys: idleSeconds, historyTurns, choiceSeconds, slotSeconds, approvalSeconds)",
    ]);
  });

  it("names a binding's namespace by its index and lists the known ones", () => {
    const text = `${namespaces}telegram:\n  bots:\n    - token: "1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n      namespace: feed\n    - token: "2:b"\n      namespace: fed\n`;
    expect(errorsOf(text)).toEqual([
      'telegram.bots[1].namespace: unknown namespace "fed" (known: feed, runs)',
    ]);
  });

  it("reports every error at once, in file order, with its line", () => {
    const text = `${namespaces}telegram:\n  bots:\n    - token: nope\n      namespace: kg\n      users: [x]\nmatrix:\n  homeserver: not a url\n  accessToken: \${MX}\n`;
    const report = checkConfigText(text, {});
    expect(report.config).toBeUndefined();
    expect(report.errors.map((e) => e.path)).toEqual([
      "telegram.bots[0].token",
      "telegram.bots[0].namespace",
      "telegram.bots[0].users[0]",
      "matrix.homeserver",
      "matrix.accessToken",
    ]);
    expect(report.errors[1]!.line).toBe(10);
    expect(() => parseConfig(text, {})).toThrow(/the configuration has 5 errors/);
    try {
      parseConfig(text, {});
    } catch (err) {
      expect((err as ConfigError).issues).toHaveLength(5);
    }
  });

  it("requires the webhook section in webhook mode", () => {
    const text = `${namespaces}telegram:\n  mode: webhook\n  bots:\n    - token: "1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n      namespace: feed\n`;
    expect(errorsOf(text)).toEqual([
      'telegram.webhook: required when telegram.mode is "webhook" (url, secretToken, optional host and port)',
    ]);
  });

  it("refuses required encryption without a store key, and a store key too short to be one", () => {
    const matrix = `matrix:\n  homeserver: https://m.example.org\n  accessToken: t\n  rooms: [{ room: "!a:b", namespace: runs }]\n`;
    expect(errorsOf(`${namespaces}${matrix}  encryption: required\n`)).toEqual([
      expect.stringMatching(/^matrix\.storeKey: required when matrix\.encryption is "required"/),
    ]);
    expect(errorsOf(`${namespaces}${matrix}  storeKey: short\n`)).toEqual([
      expect.stringMatching(/^matrix\.storeKey: .*16 characters/),
    ]);
    expect(errorsOf(`${namespaces}${matrix}  storeKey: \${MATRIX_STORE_KEY}\n`)).toEqual([
      expect.stringContaining("MATRIX_STORE_KEY is not set"),
    ]);
  });

  it("refuses a room, a group or a bot bound twice", () => {
    const text = `${namespaces}telegram:\n  bots:\n    - token: "7:a"\n      namespace: feed\n      groups: [{ chat: -5 }, { chat: -5 }]\n    - token: "7:a"\n      namespace: runs\nmatrix:\n  homeserver: https://m.example.org\n  accessToken: t\n  rooms:\n    - { room: "!a:b", namespace: runs }\n    - { room: "!a:b", namespace: feed }\n`;
    expect(errorsOf(text)).toEqual([
      "telegram.bots[0].groups[1].chat: group -5 is bound twice (also at telegram.bots[0].groups[0].chat)",
      "telegram.bots[1].token: the same bot (id 7) is configured twice (also at telegram.bots[0].token)",
      'matrix.rooms[1].room: room "!a:b" is bound twice (also at matrix.rooms[0].room)',
    ]);
  });

  it("warns about a namespace nobody uses, without failing", () => {
    const text = `${namespaces}telegram:\n  bots:\n    - token: "1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n      namespace: feed\n`;
    const report = checkConfigText(text, {});
    expect(report.errors).toEqual([]);
    expect(report.config).toBeDefined();
    expect(report.warnings.map((w) => w.path)).toEqual(["namespaces.runs"]);
  });

  it("takes ${VAR:-default} and typed values from the environment", () => {
    const text = `${namespaces}http:\n  port: \${PORT:-9464}\n  host: \${HOST:-127.0.0.1}\n`;
    expect(parseConfig(text, {}).http).toEqual({ port: 9464, host: "127.0.0.1" });
    expect(parseConfig(text, { PORT: "9500" }).http?.port).toBe(9500);
  });
});

describe("roles in the configuration", () => {
  it("refuses approvals that could never be granted, and a binding name used twice", () => {
    const text =
      `${namespaces}telegram:\n  bots:\n    - token: "1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n      namespace: feed\n      groups:\n` +
      `        - { chat: -5, name: team, users: [1, 2], approvers: [2], approvals: { count: 2 } }\n` +
      `        - { chat: -6, name: team, approvals: { by: approvers } }\n`;
    expect(errorsOf(text)).toEqual([
      'telegram.bots[0].groups[0].name: binding name "team" is used twice (also at telegram.bots[0].groups[1])',
      "telegram.bots[0].groups[0].approvals.count: 2 approvals are needed but only 1 approvers are listed, so nothing could ever be approved",
      'telegram.bots[0].groups[1].name: binding name "team" is used twice (also at telegram.bots[0].groups[0])',
      "telegram.bots[0].groups[1].approvals.count: approval by approvers needs `approvers` listed in this binding",
    ]);
  });
});

describe("roomgate config check -c file", () => {
  const write = (text: string) => {
    const file = join(mkdtempSync(join(tmpdir(), "rg-config-")), "roomgate.yaml");
    writeFileSync(file, text);
    return file;
  };
  const run = (file: string) =>
    spawnSync(process.execPath, ["bin/roomgate", "config", "check", "-c", file], {
      encoding: "utf8",
      env: { PATH: process.env.PATH },
    });

  it("prints every error and warning and exits 1", () => {
    const file = write(
      `${namespaces}  kg:\n    command: [x]\ntelegram:\n  mode: webhook\n  bots:\n    - token: "1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n      namespace: fed\n`,
    );
    const result = run(file);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(`${file}: 2 errors, 3 warnings`);
    expect(result.stdout).toContain("error: telegram.webhook: required");
    expect(result.stdout).toContain(
      'error: telegram.bots[0].namespace: unknown namespace "fed" (known: feed, runs, kg)',
    );
  });

  it("exits 0 on a valid file and still prints its warnings", () => {
    const file = write(
      `${namespaces}telegram:\n  bots:\n    - token: "1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n      namespace: feed\n`,
    );
    const result = run(file);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`${file}: valid, 1 warning`);
    expect(result.stdout).toContain(
      "warning: namespaces.runs: no Telegram bot or Matrix room uses this namespace",
    );
  });

  it("#11 refuses a webhook secret token shorter than 16 characters", () => {
    const webhook = (secret: string) =>
      write(
        `${namespaces}telegram:\n  mode: webhook\n  webhook: { url: "https://bot.example/tg", secretToken: "${secret}" }\n` +
          `  bots:\n    - token: "1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n      namespace: feed\n`,
      );
    const short = run(webhook("0123456789abcde"));
    expect(short.status).toBe(1);
    expect(short.stdout).toContain("error: telegram.webhook.secretToken: at least 16 characters");
    const odd = run(webhook("0123456789abcdef!"));
    expect(odd.stdout).toContain("error: telegram.webhook.secretToken: only A-Z, a-z, 0-9, _ and -");
    expect(run(webhook("0123456789abcdef")).stdout).not.toContain("secretToken");
  });
});
