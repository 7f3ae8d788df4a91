import { describe, expect, it } from "vitest";
import { checkConfigText } from "../../src/core/config.js";
import { maskSecrets, scrubSecrets } from "../../src/core/log.js";

const BOT = `"123456789:${"A".repeat(35)}"`;
const namespaces = "namespaces:\n  feed:\n    command: [node, dist/demo/main.js]\n";
const bot = (extra = "") => `telegram:\n  bots:\n    - token: ${BOT}\n      namespace: feed\n${extra}`;

function lines(text: string, env: NodeJS.ProcessEnv = {}) {
  const report = checkConfigText(text, env);
  return {
    errors: report.errors.map((e) => `${e.path}: ${e.message}`),
    warnings: report.warnings.map((e) => `${e.path}: ${e.message}`),
  };
}

describe("config check catches what start would fail on, in words that lead to the fix", () => {
  it("refuses a port out of range (start failed with ERR_SOCKET_BAD_PORT)", () => {
    expect(lines(`${namespaces}${bot()}http: { port: 99999 }\n`).errors).toEqual([
      "http.port: a port is a number from 0 to 65535",
    ]);
  });

  it("names a misspelt key whose variable is unset as the misspelling, and only that", () => {
    const text = `${namespaces}matrix:\n  homeserver: https://m.example.org\n  acessToken: \${MATRIX_TOKEN}\n  rooms: [{ room: "!a:b", namespace: feed }]\n`;
    expect(lines(text).errors).toEqual(['matrix.acessToken: unknown key (did you mean "accessToken"?)']);
  });

  it('says "required" for a missing field, not "received undefined"', () => {
    const text = `${namespaces}matrix:\n  homeserver: https://m.example.org\n  rooms: [{ room: "!a:b", namespace: feed }]\n`;
    expect(lines(text).errors).toEqual(["matrix.accessToken: required (a string)"]);
  });

  it("says Telegram user ids are numbers, and how to find one's own with roomgate pair", () => {
    const [error] = lines(`${namespaces}${bot('      users: ["@me"]\n')}`).errors;
    expect(error).toContain("telegram.bots[0].users[0]: Telegram user ids are numbers");
    expect(error).toContain("roomgate pair --binding telegram:123456789");
  });

  it("suggests the usual router name for a misnamed one, and warns about one outside the prefix", () => {
    const misnamed = `namespaces:\n  feed:\n    command: [x]\n    ask: feed.asks\n${bot()}`;
    expect(lines(misnamed).warnings).toEqual([
      'namespaces.feed.ask: no router is usually named "feed.asks"; did you mean "feed.ask"?',
    ]);
    const outside = `namespaces:\n  feed:\n    command: [x]\n    ask: runs.ask\n${bot()}`;
    expect(lines(outside).warnings[0]).toContain('"runs.ask" is not under the namespace\'s prefix "feed."');
  });

  it("refuses a hook secret shorter than 16 characters and warns about a token not shaped like BotFather's", () => {
    const hook = `http: { port: 0 }\nhooks:\n  - { name: ci, room: "telegram:123:5", secret: x }\n`;
    const short = `${namespaces}telegram:\n  bots:\n    - { token: "123:abc", namespace: feed, users: [5] }\n${hook}`;
    const found = lines(short);
    expect(found.errors).toEqual([
      "hooks[0].secret: too short: 1 characters, at least 16 needed (e.g. `openssl rand -hex 32`)",
    ]);
    expect(found.warnings).toContain(
      "telegram.bots[0].token: does not look like a token from BotFather (<bot id>:<35 characters>); Telegram will refuse it",
    );
  });

  it("warns that an approver who also asks, alone with count: 1, can never have a call approved", () => {
    const text = `${namespaces}${bot("      users: [5, 6]\n      approvers: [5]\n")}`;
    expect(lines(text).warnings).toEqual([
      "telegram.bots[0].approvers: nobody can approve a call 5 asks for: a requester does not count toward their own approvals, and 0 other approver(s) are fewer than count: 1; list another approver",
    ]);
    expect(lines(`${namespaces}${bot("      users: [5, 6]\n      approvers: [5, 6]\n")}`).warnings).toEqual(
      [],
    );
  });
});

describe("secrets from the configuration are masked by value, however short", () => {
  it("masks a 7-character token, a hook secret, a namespace env secret and a header, even invalid", () => {
    const text =
      `namespaces:\n  feed:\n    command: [x]\n    env: { API_KEY: k3y, PLAIN: "\${FROM_ENV}" }\n` +
      `    headers: { Authorization: "Bearer hdr-tok" }\n` +
      `telegram:\n  bots:\n    - { token: "\${TELEGRAM_TOKEN}", namespace: feed, users: [5] }\n` +
      `hooks:\n  - { name: ci, room: "telegram:123:5", secret: "\${HOOK}" }\n`;
    checkConfigText(text, { TELEGRAM_TOKEN: "123:abc", FROM_ENV: "env-val", HOOK: 'q"uo\\te' });
    const said = scrubSecrets("GET /bot123:abc/getMe k3y env-val hdr-tok Bearer hdr-tok");
    expect(said).toBe("GET /bot[secret]/getMe [secret] [secret] [secret] [secret]");
    // Masked before encoding: JSON escapes " and \, which no mask of the raw value would match.
    const encoded = JSON.stringify(maskSecrets({ args: { note: 'hook is q"uo\\te' } }));
    expect(encoded).toBe('{"args":{"note":"hook is [secret]"}}');
  });

  it("leaves ordinary values alone: a namespace env value that is not a secret stays readable", () => {
    checkConfigText(`namespaces:\n  feed:\n    command: [x]\n    env: { ATTEST_TOOLS: feedonly }\n`, {});
    expect(scrubSecrets("feedonly")).toBe("feedonly");
  });
});
