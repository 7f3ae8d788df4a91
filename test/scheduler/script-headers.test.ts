import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z, type ZodType } from "zod";
import "../../src/matrix/crypto/device-scripts.js";
import { declaredScripts, type LuaScript } from "../../src/scheduler/lua-script.js";
import "../../src/scheduler/rate-limiter.js";
import "../../src/scheduler/scheduler-scripts.js";
import "../../src/sessions/audit-log.js";

/**
 * Every Lua script's header says what its declaration says: the KEYS in the declared
 * order (then `more` when its arguments name further keys by their index in KEYS), the
 * ARGS and REPLY fields the schemas have, the BLOBS it takes; and its body reads no key
 * or argument it was not declared with (a misspelt `A.x` is nil in Lua), and no key
 * outside KEYS (a key passed as a string argument would break Cluster's routing).
 */
type Section = "KEYS" | "ARGS" | "BLOBS" | "REPLY";

/** The names each section of a script's header lists (a name at four spaces; deeper lines go on). */
function header(text: string): { title: string; sections: Record<Section, string[]> } {
  const end = text.indexOf("]]");
  if (!text.startsWith("--[[") || end < 0) throw new Error("no --[[ … ]] header");
  const lines = text.slice(4, end).split("\n").slice(1);
  const sections: Record<Section, string[]> = { KEYS: [], ARGS: [], BLOBS: [], REPLY: [] };
  let current: Section | undefined;
  for (const line of lines) {
    const heading = /^ {2}(KEYS|ARGS|BLOBS|REPLY)\s*$/.exec(line);
    if (heading) current = heading[1] as Section;
    else if (/^ {2}\S/.test(line)) current = undefined;
    else if (current) {
      const entry = /^ {4}([A-Za-z_]\w*)(\s|$)/.exec(line);
      if (entry) sections[current].push(entry[1]!);
    }
  }
  return { title: lines[0]?.trim() ?? "", sections };
}

/** The field names a schema's table has: every option's, for a union. */
function fieldsOf(schema: ZodType): string[] {
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  if (schema instanceof z.ZodUnion)
    return [...new Set(schema.options.flatMap((o) => fieldsOf(o as ZodType)))];
  if (schema instanceof z.ZodPipe) return fieldsOf(schema.in as ZodType);
  throw new Error(`not a table schema: ${schema.constructor.name}`);
}

/** The names the script's own body reads as `<table>.<name>`. */
function used(body: string, table: "K" | "A"): string[] {
  return [...new Set([...body.matchAll(new RegExp(`\\b${table}\\.([A-Za-z_]\\w*)`, "g"))].map((m) => m[1]!))];
}

const scripts = declaredScripts();
const sorted = (names: string[]) => [...names].sort();

describe("each Lua script's header against its declaration", () => {
  it("finds the project's scripts declared", () => {
    const ids = scripts.map((s) => s.id);
    for (const id of ["finish-turn", "park-turn", "reserve-slot", "expire-approvals", "write-device"])
      expect(ids).toContain(id);
  });

  it.each(scripts.map((s) => [s.id, s] as [string, LuaScript<string, unknown, unknown>]))(
    "%s",
    (id, script) => {
      const text = readFileSync(script.file, "utf8");
      const { title, sections } = header(text);
      expect(title.startsWith(`${id}:`), `the header opens with "${id}:"`).toBe(true);
      expect(sections.KEYS, "KEYS, in order").toEqual([...script.keys, ...(script.moreKeys ? ["more"] : [])]);
      expect(sorted(sections.ARGS), "ARGS").toEqual(sorted(fieldsOf(script.args)));
      expect(sorted(sections.REPLY), "REPLY").toEqual(sorted(fieldsOf(script.reply)));
      expect(sections.BLOBS, "BLOBS").toEqual(script.blobs ? [script.blobs] : []);
      const body = text.slice(text.indexOf("]]"));
      for (const key of used(body, "K")) expect(script.keys, `K.${key} is a declared key`).toContain(key);
      const args = fieldsOf(script.args);
      for (const arg of used(body, "A")) expect(args, `A.${arg} is a declared argument`).toContain(arg);
      // Every key a call touches is in KEYS: named (K.x), or, with moreKeys, by an argument's index.
      const code = [body, ...(script.includes ?? []).map((url) => readFileSync(url, "utf8"))].join("\n");
      for (const [, index] of code.matchAll(/KEYS\[([^\]]*)\]/g)) {
        expect(script.moreKeys, `KEYS[${index}] read without moreKeys`).toBe(true);
        expect(index, `KEYS[${index}] is indexed by a …Key argument`).toMatch(/^\w+\.\w+Key$/);
      }
    },
  );
});
