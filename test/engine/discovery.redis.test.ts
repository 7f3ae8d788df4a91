import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { callsIn, DEMO_SERVER, startSpine, type Spine } from "../support/spine.js";

describe("a namespace found by address (the demo's mesh)", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine({
      namespace: "mesh",
      config: ConfigSchema.parse({
        namespaces: {
          mesh: {
            command: [process.execPath, DEMO_SERVER],
            env: { ATTEST_TOOLS: "mesh" },
            ask: false,
            discovery: { search: "mesh.search", describe: "mesh.describe", call: "mesh.call" },
          },
        },
      }),
    });
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("/tools words searches through the namespace's own search tool", async () => {
    const d = await spine.rooms.ask("search", "/tools postgres databases");
    expect(d.text).toContain("novox/postgres.databases — The databases novox's postgres holds");
    expect(d.text).toContain("ace/postgres.databases — The databases ace's postgres holds");
  });

  it("/describe and /call an address through its describe and call tools", async () => {
    const described = await spine.rooms.ask("call", "/describe novox/backup.status");
    expect(described.text).toContain("novox/backup.status: When novox last backed up");
    expect(described.text).toContain("• database (string, required)");
    const called = await spine.rooms.ask("call", "/call novox/backup.status database=billing");
    expect(called.text).toContain("novox backup of billing: 03:00 today, ok");
  });

  it("a call refused as ambiguous shows the candidates as options; choosing one calls it", async () => {
    const d = await spine.rooms.ask("ambiguous", "/call postgres.databases");
    expect(d.text).toContain("That address is ambiguous; the server named these candidates.");
    expect(d.outcome.reply!.options.map((o) => o.label)).toEqual([
      "novox/postgres.databases",
      "ace/postgres.databases",
    ]);
    const chosen = await spine.rooms.ask("ambiguous", "2");
    expect(chosen.text).toContain("ace postgres holds: metrics");
  });
});

describe("#8 tools.allow / tools.deny apply to discovery addresses", () => {
  let spine: Spine;
  const callLog = join(mkdtempSync(join(tmpdir(), "roomgate-denied-address-")), "calls.log");
  beforeAll(async () => {
    spine = await startSpine({
      namespace: "mesh",
      config: ConfigSchema.parse({
        namespaces: {
          mesh: {
            command: [process.execPath, DEMO_SERVER],
            env: { ATTEST_TOOLS: "mesh", DEMO_CALL_LOG: callLog },
            ask: false,
            discovery: { search: "mesh.search", describe: "mesh.describe", call: "mesh.call" },
            tools: { deny: ["*backup*", "ace/*"] },
          },
        },
      }),
    });
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("#8 refuses /call and /describe of a denied address without sending it to the discovery tools", async () => {
    const called = await spine.rooms.ask("deny", "/call novox/backup.status database=billing");
    expect(called.text).toContain(
      "novox/backup.status is not a tool of this room's agent (mesh). Nothing was called.",
    );
    const described = await spine.rooms.ask("deny", "/describe novox/backup.status");
    expect(described.text).toContain("is not a tool of this room's agent");
    expect(callsIn(callLog).filter((l) => l.includes("backup"))).toEqual([]);
  });

  it("#8 offers only the allowed candidates of an ambiguous address", async () => {
    const d = await spine.rooms.ask("deny-ambiguous", "/call postgres.databases");
    expect(d.outcome.reply!.options.map((o) => o.label)).toEqual(["novox/postgres.databases"]);
    const chosen = await spine.rooms.ask("deny-ambiguous", "1");
    expect(chosen.text).toContain("novox postgres holds");
  });

  it("#8 still calls an allowed address", async () => {
    const d = await spine.rooms.ask("allowed", "/call novox/postgres.databases");
    expect(d.text).toContain("novox postgres holds");
  });
});
