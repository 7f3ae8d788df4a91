import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { privateDir, privatizeTree } from "../core/private-files.js";

/** The installed package's root folder (where package.json and dist/ are). */
export const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

/** The state folder: embedded Redis data and logs; `ROOMGATE_STATE_DIR` moves it. */
export function stateDir(): string {
  return process.env.ROOMGATE_STATE_DIR ?? join(packageRoot, ".state");
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
