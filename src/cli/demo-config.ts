import { ConfigSchema, type Config } from "../core/config.js";
import { demoServerEntry } from "./paths.js";

/** The demo namespaces served by the bundled demo server. */
export const DEMO_NAMESPACES = ["feed", "runs", "kg", "sym"] as const;

/**
 * The embedded default configuration: each demo namespace is its own child process
 * restricted to that namespace (`ATTEST_TOOLS`), the first of DESIGN §6's three scope checks.
 */
export function demoConfig(): Config {
  return ConfigSchema.parse({
    namespaces: {
      ...Object.fromEntries(
        DEMO_NAMESPACES.map((ns) => [
          ns,
          { command: [process.execPath, demoServerEntry], env: { ATTEST_TOOLS: ns } },
        ]),
      ),
      // Found by address: no router, its own search / describe / call tools.
      mesh: {
        command: [process.execPath, demoServerEntry],
        env: { ATTEST_TOOLS: "mesh" },
        ask: false,
        discovery: { search: "mesh.search", describe: "mesh.describe", call: "mesh.call" },
      },
    },
  });
}
