import { createServer } from "node:net";
import type { Config } from "../../core/config.js";
import { ok, problem, type Diagnosis } from "../../core/diagnosis.js";

/** What listening on `host:port` would meet: nothing (free), or the error code. */
function tryListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** Whether what holds the port answers like a roomgate's /healthz. */
async function roomgateHolds(host: string, port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://${host.includes(":") ? `[${host}]` : host}:${port}/healthz`, {
      signal: AbortSignal.timeout(2000),
    });
    const body = (await res.json()) as { ok?: unknown };
    return typeof body.ok === "boolean";
  } catch {
    return false;
  }
}

async function checkPort(key: string, host: string, port: number): Promise<Diagnosis> {
  if (port === 0) return ok(`${key}: port 0, any free port is taken at start`);
  const code = await tryListen(host, port);
  if (code === undefined) return ok(`${key}: ${host}:${port} is free`);
  if (code === "EADDRINUSE") {
    const ours = await roomgateHolds(host, port);
    return problem(
      `${key}: ${host}:${port} is in use by ${ours ? "a running roomgate (its /healthz answers)" : "another process"}`,
      ours
        ? "stop the running roomgate first, or give this one another port"
        : `stop what listens there (ss -ltnp 'sport = :${port}'), or set ${key}.port to a free port`,
    );
  }
  if (code === "EACCES") {
    return problem(
      `${key}: listening on port ${port} is not allowed for this user`,
      "use a port above 1024, or give the service CAP_NET_BIND_SERVICE",
    );
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
    return problem(
      `${key}: ${host} is not an address of this machine (${code})`,
      `set ${key}.host to 127.0.0.1, 0.0.0.0 or one of this machine's addresses`,
    );
  }
  return problem(
    `${key}: cannot listen on ${host}:${port} (${code})`,
    `set ${key}.port and ${key}.host to an address this machine can listen on`,
  );
}

/** The ports start listens on (health and metrics; the Telegram webhook), each free and allowed. */
export async function checkPorts(config: Config): Promise<Diagnosis[]> {
  const found: Diagnosis[] = [];
  if (config.http) found.push(await checkPort("http", config.http.host, config.http.port));
  const hook = config.telegram?.mode === "webhook" ? config.telegram.webhook : undefined;
  if (hook) found.push(await checkPort("telegram.webhook", hook.host, hook.port));
  return found;
}
