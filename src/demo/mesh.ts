import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/**
 * `mesh`: a namespace found by address, not announced whole (ADR 195 in the
 * shared context): three tools walk it — search, describe, call an address —
 * and a module on two machines must be called with its machine named.
 */
interface Address {
  description: string;
  args: Record<string, string>;
  run: (args: Record<string, unknown>) => string;
}

const ADDRESSES: Record<string, Address> = {
  "clock.now": {
    description: "The mesh's clock: the current time",
    args: {},
    run: () => "2026-10-03T12:00:00Z",
  },
  "novox/postgres.databases": {
    description: "The databases novox's postgres holds",
    args: {},
    run: () => "novox postgres holds: billing, users",
  },
  "ace/postgres.databases": {
    description: "The databases ace's postgres holds",
    args: {},
    run: () => "ace postgres holds: metrics",
  },
  "novox/backup.status": {
    description: "When novox last backed up, for a given database",
    args: { database: "string" },
    run: (a) => `novox backup of ${String(a.database)}: 03:00 today, ok`,
  },
};

/** Interchangeable names for modules held by several machines: calling one asks which machine. */
function machinesOf(address: string): string[] {
  return Object.keys(ADDRESSES).filter((a) => a.endsWith(`/${address}`));
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const text = (t: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: t }],
  isError,
});

/** Registers mesh.search, mesh.describe and mesh.call on the demo server. */
export function registerMesh(server: McpServer): void {
  server.registerTool(
    "mesh.search",
    {
      title: "Search the mesh",
      description: "Words in, matching addresses out with one line each, across every machine",
      inputSchema: { query: z.string() },
      annotations: READ_ONLY,
    },
    ({ query }) => {
      const words = query.toLowerCase().split(/\W+/).filter(Boolean);
      const hits = Object.entries(ADDRESSES).filter(([address, a]) =>
        words.some((w) => `${address} ${a.description}`.toLowerCase().includes(w)),
      );
      if (hits.length === 0) return text(`No address matches "${query}".`);
      return text(hits.map(([address, a]) => `${address} — ${a.description}`).join("\n"));
    },
  );
  server.registerTool(
    "mesh.describe",
    {
      title: "Describe an address",
      description: "One address in, its description and arguments out",
      inputSchema: { address: z.string() },
      annotations: READ_ONLY,
    },
    ({ address }) => {
      const a = ADDRESSES[address];
      if (!a) return text(`There is no address ${address}.`, true);
      const args = Object.entries(a.args).map(([name, type]) => `• ${name} (${type}, required)`);
      return text(
        [`${address}: ${a.description}`, args.length > 0 ? "Arguments:" : "No arguments.", ...args].join(
          "\n",
        ),
      );
    },
  );
  server.registerTool(
    "mesh.call",
    {
      title: "Call an address",
      description: "An address and its arguments in, the answer out, with the machine that gave it",
      inputSchema: { address: z.string(), arguments: z.record(z.string(), z.unknown()).optional() },
      annotations: READ_ONLY,
    },
    ({ address, arguments: args }) => {
      const a = ADDRESSES[address];
      if (a) {
        const missing = Object.keys(a.args).filter((name) => args?.[name] === undefined);
        if (missing.length > 0) return text(`${address} needs ${missing.join(", ")}.`, true);
        return text(a.run(args ?? {}));
      }
      const candidates = machinesOf(address);
      if (candidates.length > 0) {
        return {
          ...text(
            `${address} runs on ${candidates.length} machines; name one: ${candidates.join(", ")}`,
            true,
          ),
          structuredContent: { error: "ambiguous", candidates },
        };
      }
      return text(`There is no address ${address}.`, true);
    },
  );
}
