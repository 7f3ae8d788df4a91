import { fileURLToPath } from "node:url";
import { join } from "node:path";

/** The installed package's root folder (where package.json and dist/ are). */
export const packageRoot = fileURLToPath(new URL("../../", import.meta.url));

/** The state folder: embedded Redis data and logs; `ROOMGATE_STATE_DIR` moves it. */
export function stateDir(): string {
  return process.env.ROOMGATE_STATE_DIR ?? join(packageRoot, ".state");
}

/** The compiled demo MCP server entry. */
export const demoServerEntry = join(packageRoot, "dist", "demo", "main.js");
