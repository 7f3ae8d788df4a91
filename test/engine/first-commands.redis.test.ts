import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { DEMO_DESCRIPTIONS } from "../../src/demo/server.js";
import { COMMANDS } from "../../src/engine/commands/index.js";
import { DEMO_SERVER, startSpine, type Spine } from "../support/spine.js";

describe("the commands people type first", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine();
  });
  afterAll(async () => spine.stop());

  it("/start greets with the namespace, the server's own description and the commands", async () => {
    const d = await spine.rooms.ask("start", "/start");
    expect(d.text).toContain(`This bot is the "feed" agent: ${DEMO_DESCRIPTIONS.feed}`);
    for (const c of COMMANDS.filter((c) => c.menu)) expect(d.text).toContain(`/${c.name} — ${c.description}`);
    expect(d.text).not.toContain("Unknown command");
    const payload = await spine.rooms.ask("start", "/start from-a-deep-link");
    expect(payload.text).toContain('This bot is the "feed" agent');
  });

  it("every listed command is understood", async () => {
    for (const c of COMMANDS) {
      const d = await spine.rooms.ask("every", `/${c.name}`);
      expect(d.text, c.name).not.toContain("Unknown command");
    }
  });

  it("/new starts a new conversation, as /reset does", async () => {
    await spine.rooms.ask("new", "/tools");
    const before = await spine.rooms.ask("new", "/status");
    expect(before.text).toMatch(/Enabled tools: .*feed\.search/);
    const conversation = /Conversation: (\S+)/.exec(before.text)![1];
    const fresh = await spine.rooms.ask("new", "/new");
    expect(fresh.text).toContain("New conversation started");
    const after = await spine.rooms.ask("new", "/status");
    expect(after.text).not.toContain(conversation);
    expect(after.text).toContain("Enabled tools: feed.ask, feed.tools");
  });
});

describe("/status on a server without ask or tools", () => {
  let spine: Spine;
  beforeAll(async () => {
    // The demo server as a whole, unprefixed: its tools are feed.*, so there is no `ask` and no `tools`.
    const config = ConfigSchema.parse({
      namespaces: {
        raw: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" }, prefix: "" },
      },
    });
    spine = await startSpine({ config, namespace: "raw" });
  });
  afterAll(async () => spine.stop());

  it("lists only tools that exist", async () => {
    const d = await spine.rooms.ask("status", "/status");
    expect(d.text).toContain("Enabled tools: none");
    expect(d.text).not.toMatch(/\bask\b|\btools\b(?!:)/);
    await spine.rooms.ask("status", "/tools");
    const enabled = await spine.rooms.ask("status", "/status");
    const line = enabled.text.split("\n").find((l) => l.startsWith("Enabled tools:"))!;
    expect(line.split(": ")[1]!.split(", ")).toEqual(expect.arrayContaining(["feed.ask", "feed.list"]));
    expect(line).not.toMatch(/ (ask|tools)(,|$)/);
  });
});
