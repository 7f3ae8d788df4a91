import type { ElicitHandler } from "./elicitation-router.js";

/** One progress notification of a running call, as MCP sends it. */
export interface CallProgress {
  progress: number;
  total?: number;
  message?: string;
  /** A task's status rather than a count: shown as its message alone. */
  status?: boolean;
}

/** What a namespace's server says about itself when connected (MCP serverInfo and instructions). */
export interface NamespaceAbout {
  title?: string;
  description?: string;
  instructions?: string;
  /** The MCP revision the connection speaks, e.g. "2026-07-28". */
  revision?: string;
  /** The extensions the server offers (e.g. the Tasks extension), by identifier. */
  extensions?: string[];
}

/** Options of one call: a timeout (default from config), a signal that cancels it, progress updates. */
export interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (progress: CallProgress) => void;
  /** Asks the person when the server elicits input during this call; without it such requests are declined. */
  onElicit?: ElicitHandler;
  /**
   * Where a tool that runs as an MCP task keeps its task id (the room and a key naming
   * this call, stable across a retried turn), so a restart resumes it; without it a
   * task tool is called without a task.
   */
  task?: { room: string; key: string };
}
