import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readEvents, type ServerEvent } from "./events.js";

/** The command that runs the revision-2026 test server as a child process. */
export const MCP26_COMMAND = [
  process.execPath,
  "--import",
  "tsx",
  join(process.cwd(), "test/support/mcp-2026/server.ts"),
];

/** Which revisions the test server speaks (MCP26_REVISION). */
export type ServerRevision = "both" | "2026-07-28" | "2025-11-25";

/** One test server's files: its event log and its note, and the namespace config that starts it. */
export interface Mcp26Server {
  /** A namespace's `command`, `cwd` and `env`, to spread into its config. */
  namespace: { command: string[]; cwd: string; env: Record<string, string> };
  /** What the server did so far (every process of it, probes included). */
  events(kind?: string): ServerEvent[];
  /** Changes the note resource (the server announces it). */
  setNote(text: string): void;
}

/** Files for one test server speaking `revision`; each stage of its builds takes `stageMs`. */
export function mcp26Server(revision: ServerRevision, stageMs = 300): Mcp26Server {
  const dir = mkdtempSync(join(tmpdir(), "roomgate-mcp26-"));
  const log = join(dir, "events.log");
  const noteFile = join(dir, "note.txt");
  writeFileSync(noteFile, "nothing yet");
  return {
    namespace: {
      command: MCP26_COMMAND,
      cwd: process.cwd(),
      env: {
        MCP26_REVISION: revision,
        MCP26_LOG: log,
        MCP26_NOTE: noteFile,
        MCP26_STAGE_MS: String(stageMs),
      },
    },
    events: (kind) => readEvents(log).filter((e) => kind === undefined || e.event === kind),
    setNote: (text) => writeFileSync(noteFile, text),
  };
}

/** The test server as a Streamable HTTP child process (createMcpHandler), once it listens. */
export interface Mcp26Http extends Mcp26Server {
  url: string;
  stop(): Promise<void>;
}

/** Starts the test server over Streamable HTTP on a free loopback port. */
export async function startMcp26Http(revision: ServerRevision, stageMs = 300): Promise<Mcp26Http> {
  const files = mcp26Server(revision, stageMs);
  const [command, ...args] = files.namespace.command;
  const child = spawn(command!, args, {
    cwd: files.namespace.cwd,
    env: { ...process.env, ...files.namespace.env, MCP26_HTTP_PORT: "0" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the test server did not start listening")), 30_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      const listening = /listening (\d+)/.exec(chunk.toString());
      if (!listening) return;
      clearTimeout(timer);
      resolve(Number(listening[1]));
    });
    child.once("exit", (code) => reject(new Error(`the test server exited with ${code}`)));
  });
  return {
    ...files,
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
