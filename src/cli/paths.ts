import { openSync, readFileSync } from "node:fs";
import { createLogger, type Logger } from "../core/log.js";
import { homedir } from "node:os";
import { fileURLToPath } from "node:url";
import { join, sep } from "node:path";
import { privateDir, privatizeTree } from "../core/private-files.js";

/** The installed package's root folder (where package.json and dist/ are). */
export const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

/** True when roomgate runs from an installed package rather than a checkout. */
export const installed = packageRoot.split(sep).includes("node_modules");

/**
 * The state folder: embedded Redis data and logs; `ROOMGATE_STATE_DIR` moves it. A
 * checkout keeps it in `.state/` beside the code; an installed package, whose folder
 * may not be writable and is replaced on upgrade, in the user's state home
 * (`$XDG_STATE_HOME/roomgate`, default `~/.local/state/roomgate`).
 */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ROOMGATE_STATE_DIR) return env.ROOMGATE_STATE_DIR;
  if (!installed) return join(packageRoot, ".state");
  return join(env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state"), "roomgate");
}

/** The version of the package this code belongs to. */
export function packageVersion(): string {
  const meta = JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string };
  return meta.version;
}

/**
 * A folder of the state folder (`redis`, `logs`, `files`), created private and made
 * private with everything already in it (DESIGN §9: state on disk is readable by the
 * service user only); the state folder itself is made 0700 too.
 */
export function privateStateDir(name: string): string {
  const root = privateDir(stateDir());
  const dir = join(root, name);
  privateDir(dir);
  privatizeTree(dir);
  return dir;
}

/** The compiled demo MCP server entry. */
export const demoServerEntry = join(packageRoot, "dist", "demo", "main.js");

/**
 * The logger of a one-shot operator command (dead letters, pairing, users, doctor):
 * JSON lines into the state folder's log file, so the terminal shows only the
 * command's own output.
 */
export function cliLogger(): Logger {
  return createLogger({ destination: openSync(join(privateStateDir("logs"), "roomgate.log"), "a", 0o600) });
}
