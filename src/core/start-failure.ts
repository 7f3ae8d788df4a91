import { networkReason } from "./diagnosis.js";
import { RoomgateError } from "./errors.js";

/** One part of a process that could not start, and why, in an operator's words. */
export interface PartFailure {
  part: string;
  reason: string;
}

/**
 * Why something could not start, as one line without a stack: roomgate's own errors
 * say it already; a port taken or refused, a name that does not resolve or a server
 * that does not answer are said as such; anything else by its message's first line.
 */
export function failureReason(err: unknown): string {
  if (err instanceof RoomgateError) return err.userText;
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  const at =
    e.address !== undefined ? `${e.address}${e.port !== undefined ? `:${e.port}` : ""}` : "the address";
  if (e.code === "EADDRINUSE") return `${at} is in use by another process (set another port, or stop it)`;
  if (e.code === "EACCES") return `listening on ${at} is not allowed for this user (use a port above 1024)`;
  if (e.code === "EADDRNOTAVAIL") return `${at} is not an address of this machine`;
  if (e.code === "ERR_SOCKET_BAD_PORT") return "the port is out of range (0 to 65535)";
  const network = networkReason(err);
  if (network) return network;
  return (err instanceof Error ? err.message : String(err)).split("\n")[0]!;
}

/**
 * A start that failed: every part that could not start, each on its own line, so an
 * operator sees all of them at once (the Telegram bots and the Matrix account alike),
 * and no stack trace for what is a configuration or environment problem.
 */
export class StartError extends RoomgateError {
  readonly failures: readonly PartFailure[];

  constructor(failures: readonly PartFailure[], options: { cause?: unknown } = {}) {
    const lines = failures.map((f) => `${f.part}: ${f.reason}`);
    const text =
      lines.length === 1 ? `could not start ${lines[0]}` : `could not start:\n  ${lines.join("\n  ")}`;
    // The log also gets the cause's own message when its person-facing text says less.
    const cause = options.cause;
    const detail =
      cause instanceof RoomgateError && cause.message !== cause.userText ? ` (${cause.message})` : "";
    super(`${text}${detail}`, { ...options, userText: text });
    this.failures = failures;
  }

  /** The failure of one part, unless `err` already lists the parts it is about. */
  static of(part: string, err: unknown): StartError {
    return err instanceof StartError
      ? err
      : new StartError([{ part, reason: failureReason(err) }], { cause: err });
  }
}
