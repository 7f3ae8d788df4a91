import type { CommandRole } from "../access.js";
import type { Change } from "../changes.js";
import type { TurnContext } from "../turn-context.js";

export type { CommandRole };

/** A command's arguments as its parser read them, or one line saying why they cannot be read. */
export type Parsed<A> = { ok: true; args: A } | { ok: false; problem: string };

/**
 * One chat command, whole: its menu entry, who may run it, its parser and its
 * handler. The commands step (steps/commands.ts) splits `/name rest` once, checks
 * `who`, reads `rest` with `parse` once and runs `run` with what it read.
 */
export interface Command<A = undefined> {
  /** The name without the slash, lower case. */
  readonly name: string;
  /** The one line help and platform menus show. */
  readonly description: string;
  /** Whether platform menus list it (Telegram's /start has its own button). */
  readonly menu: boolean;
  /** Who may run it: one role, or one that depends on what was asked (`/mute` vs `/mute 2h`). */
  readonly who: CommandRole | ((args: A) => CommandRole);
  parse(rest: string): Parsed<A>;
  /** Runs it; `menu` is the list help shows, one `/name — description` line each. */
  run(turn: TurnContext, args: A, menu: readonly string[]): Promise<Change[]>;
}

/** A command as the registry holds it, whatever its arguments. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommand = Command<any>;

/** A chat command as sent: its name (lower case, without the slash) and the raw rest of the line. */
export interface CommandLine {
  name: string;
  rest: string;
}

/** Splits `/name rest…` (a bot mention like `/tools@feedbot` is stripped by the adapter). */
export function commandLine(text: string): CommandLine | undefined {
  const match = /^\/([A-Za-z][A-Za-z0-9_]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: match[1]!.toLowerCase(), rest: (match[2] ?? "").trim() };
}

/** The parser of a command that takes nothing: whatever follows the name is ignored. */
export function noArguments(): Parsed<undefined> {
  return { ok: true, args: undefined };
}

/** The parser of a command that takes the rest of the line as one string (maybe empty). */
export function restOfLine(rest: string): Parsed<string> {
  return { ok: true, args: rest };
}
