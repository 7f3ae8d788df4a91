import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/core/config.js";
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
    expect(config.namespaces.feed!.timeoutMs).toBe(30_000);
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
});
