import { describe, expect, it } from "vitest";
import { addressOf, nodeLogin, parseNode } from "../../src/sessions/redis-node-url.js";

describe("a Redis node URL", () => {
  it("names the node as host:port in messages, never with its password", () => {
    expect(addressOf("redis://app:s3cr%40t@10.0.0.5:6380/0")).toBe("10.0.0.5:6380");
    expect(addressOf("rediss://[::1]")).toBe("::1:6379");
    expect(addressOf("not a url")).toBe("(unreadable address)");
  });

  it("logs in with the decoded user and password, over TLS for rediss://", () => {
    const node = parseNode("rediss://app:s3cr%40t@db.example:6390");
    expect(node).toEqual({ host: "db.example", port: 6390, username: "app", password: "s3cr@t", tls: true });
    expect(nodeLogin(node)).toEqual({
      host: "db.example",
      port: 6390,
      username: "app",
      password: "s3cr@t",
      tls: {},
    });
    expect(nodeLogin(parseNode("redis://127.0.0.1"))).toEqual({ host: "127.0.0.1", port: 6379 });
  });
});
