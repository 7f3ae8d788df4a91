import type { Config } from "../core/config.js";
import { ConfigError } from "../core/errors.js";

/** How long the probe waits for /healthz (a HEALTHCHECK gives it a few seconds). */
const PROBE_TIMEOUT_MS = 3_000;

/**
 * `roomgate health`: asks the /healthz of the process the configuration describes, on
 * the host and port its `http` section names (a wildcard address is asked on loopback),
 * prints the answer and resolves to 0 when it is healthy. The image's HEALTHCHECK runs
 * it, so the check follows `http.port` wherever the configuration puts it.
 */
export async function runHealth(
  config: Config,
  out: NodeJS.WritableStream = process.stdout,
): Promise<number> {
  if (!config.http) {
    throw new ConfigError(
      "the configuration has no http section, so nothing serves /healthz: add http: { port: 9464 }",
    );
  }
  const { host, port } = config.http;
  const target = host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host;
  const url = `http://${target.includes(":") ? `[${target}]` : target}:${port}/healthz`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    out.write(`${await res.text()}\n`);
    return res.ok ? 0 : 1;
  } catch (err) {
    out.write(`${url}: no answer (${(err as Error).message})\n`);
    return 1;
  }
}
