import { describe, expect, it } from "vitest";
import { checkConfigText, issueLineOf, parseConfig } from "../../src/core/config.js";
import { ConfigError } from "../../src/core/errors.js";

const base = `
namespaces:
  feed:
    command: [node, dist/demo/main.js]
    env: { ATTEST_TOOLS: feed }
  runs:
    url: http://127.0.0.1:8765/mcp
    headers: { Authorization: "Bearer \${RUNS_TOKEN}" }
`;

describe("configuration", () => {
  it("replaces ${VAR} from the environment and applies defaults", () => {
    const config = parseConfig(base, { RUNS_TOKEN: "s3cret" });
    expect(config.namespaces.runs!.headers.Authorization).toBe("Bearer s3cret");
    expect(config.redis.prefix).toBe("rg");
    expect(config.namespaces.feed!.timeoutSeconds).toBe(30);
  });

  it("names the variable and the path when a ${VAR} is not set", () => {
    expect(() => parseConfig(base, {})).toThrow(
      /namespaces\.runs\.headers\.Authorization: environment variable RUNS_TOKEN is not set/,
    );
  });

  it("names the path of a bad field", () => {
    const bad = `${base}telegram:\n  bots:\n    - token: "1:abc"\n      namespace: feed\n      users: [notanumber]\n`;
    const err = (() => {
      try {
        parseConfig(bad, { RUNS_TOKEN: "x" });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err?.message).toMatch(/^telegram\.bots\[0\]\.users\[0\]: /);
  });

  it("refuses a namespace with both or neither of command and url", () => {
    expect(() => parseConfig("namespaces:\n  x: {}\n")).toThrow(
      /namespaces\.x: a namespace needs exactly one/,
    );
  });

  it("refuses a binding to a namespace that is not configured", () => {
    const text = `${base}matrix:\n  homeserver: https://m.example.org\n  accessToken: t\n  rooms:\n    - room: "!a:b"\n      namespace: kg\n`;
    expect(() => parseConfig(text, { RUNS_TOKEN: "x" })).toThrow(
      /matrix\.rooms\[0\]\.namespace: unknown namespace "kg" \(known: feed, runs\)/,
    );
  });

  it("reports YAML syntax errors as configuration errors", () => {
    expect(() => parseConfig("namespaces: [unclosed")).toThrow(ConfigError);
  });

  it("reads the old millisecond keys as the new seconds keys for one release, each with a warning", () => {
    const text = [
      "namespaces:",
      "  feed:",
      "    command: [node, server.js]",
      "    timeoutMs: 1500",
      "    elicitTimeoutMs: 60000",
      "limits:",
      "  fileTimeoutMs: 5000",
      "queue:",
      "  typingAfterMs: 250",
      "",
    ].join("\n");
    const report = checkConfigText(text, {});
    expect(report.errors).toEqual([]);
    expect(report.config?.namespaces.feed).toMatchObject({ timeoutSeconds: 1.5, elicitTimeoutSeconds: 60 });
    expect(report.config?.limits.fileTimeoutSeconds).toBe(5);
    expect(report.config?.queue.typingAfterSeconds).toBe(0.25);
    expect(report.warnings.map(issueLineOf)).toEqual([
      'namespaces.feed.timeoutMs: renamed to "timeoutSeconds", in seconds (1500 ms is 1.5); the old key is read until the next release  [line 4]',
      'namespaces.feed.elicitTimeoutMs: renamed to "elicitTimeoutSeconds", in seconds (60000 ms is 60); the old key is read until the next release  [line 5]',
      'limits.fileTimeoutMs: renamed to "fileTimeoutSeconds", in seconds (5000 ms is 5); the old key is read until the next release  [line 7]',
      'queue.typingAfterMs: renamed to "typingAfterSeconds", in seconds (250 ms is 0.25); the old key is read until the next release  [line 9]',
    ]);
    // Both names at once is a mistake, not a rename: the old one is an unknown key.
    const both = checkConfigText(`${text}  typingAfterSeconds: 1\n`, {});
    expect(both.errors.map(issueLineOf)).toEqual([
      'queue.typingAfterMs: unknown key (did you mean "typingAfterSeconds"?)  [line 9]',
    ]);
  });
});
