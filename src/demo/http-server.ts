import { createDemoServer, demoOptionsFromEnv, type DemoServerOptions } from "./server.js";
import { serveStatelessMcp, type StatelessHttpServer } from "./stateless-http.js";

/**
 * Serves the demo namespaces over Streamable HTTP at `/mcp`, with `GET /healthz` for
 * container health checks. This is how a namespace runs as a remote service instead
 * of a child process.
 */
export function startDemoHttpServer(
  options: DemoServerOptions & { host?: string; port: number },
): Promise<StatelessHttpServer> {
  return serveStatelessMcp(() => createDemoServer(options), options);
}

/** Reads `--http PORT` and `--host HOST` from the demo server's arguments; undefined without `--http`. */
export function httpArgs(argv: readonly string[]): { port: number; host: string } | undefined {
  const at = argv.indexOf("--http");
  if (at === -1) return undefined;
  const port = Number(argv[at + 1]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--http needs a port number, e.g. --http 8765`);
  }
  const hostAt = argv.indexOf("--host");
  return { port, host: hostAt === -1 ? "127.0.0.1" : (argv[hostAt + 1] ?? "127.0.0.1") };
}

/** Runs the demo server over HTTP until SIGTERM/SIGINT, with options from the environment. */
export async function mainHttp(
  args: { port: number; host: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const server = await startDemoHttpServer({ ...demoOptionsFromEnv(env), ...args });
  console.error(`roomgate demo server: MCP over Streamable HTTP at ${server.url}`);
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await server.close();
}
