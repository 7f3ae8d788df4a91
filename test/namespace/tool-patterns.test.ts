import { afterAll, describe, expect, it } from "vitest";
import { NamespaceConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { NamespaceClient } from "../../src/namespace/namespace-client.js";
import { compileGlob } from "../../src/namespace/tool-filter.js";
import { startToolServer, type ToolServer } from "../support/tool-server.js";

/** The meaning of a glob, written the slow way: every `*` a `.*`, every `?` a `.`. */
function reference(pattern: string, name: string): boolean {
  const body = [...pattern].map((c) => (c === "*" ? ".*" : c === "?" ? "." : c)).join("");
  return new RegExp(`^${body}$`, "s").test(name);
}

function randomOf(alphabet: string, max: number, next: () => number): string {
  const length = Math.floor(next() * (max + 1));
  return Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
}

const servers: ToolServer[] = [];
const clients: NamespaceClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.close()));
});

describe("#10 tool-name patterns compile to a matcher linear in the name's length", () => {
  it("#10 lists a server's 4,000- and 8,000-character tool names against *a*a*b at once", async () => {
    const long = (n: number) => `${"a".repeat(n - 1)}c`;
    const server = await startToolServer(
      [long(4_000), long(8_000), "keep.me", "drop.aab"].map((name) => ({
        tool: { name, inputSchema: { type: "object" as const } },
        run: () => ({ content: [{ type: "text" as const, text: "ran" }] }),
      })),
    );
    servers.push(server);
    const config = NamespaceConfigSchema.parse({
      url: server.url,
      prefix: "",
      ask: false,
      tools: { deny: ["*a*a*b"] },
    });
    const client = new NamespaceClient("long", config, silentLogger());
    clients.push(client);
    const started = Date.now();
    const names = (await client.tools()).map((t) => t.name);
    // With a backtracking regular expression this took 21 s (4,000) and 169 s (8,000).
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(names.map((n) => n.length).sort((a, b) => a - b)).toEqual([7, 4_000, 8_000]);
    expect(names).not.toContain("drop.aab");
  });

  it("#10 decides the same as the slow reading of the pattern on 20,000 random cases", () => {
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i++) {
      const pattern = randomOf("ab*?", 7, next);
      const name = randomOf("ab", 9, next);
      expect(compileGlob(pattern)(name), `${pattern} ~ ${name}`).toBe(reference(pattern, name));
    }
  });

  it("#10 takes patterns literally apart from * and ?", () => {
    expect(compileGlob("feed.ask")("feed.ask")).toBe(true);
    expect(compileGlob("feed.ask")("feedXask")).toBe(false);
    expect(compileGlob("(a|b)+")("(a|b)+")).toBe(true);
    expect(compileGlob("*write*")("fs.write_file")).toBe(true);
    expect(compileGlob("a*a")("a")).toBe(false);
  });
});
