import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";

/** The entry of `@modelcontextprotocol/server-everything`, the reference MCP server (a pinned dev dependency). */
export const EVERYTHING = join(
  process.cwd(),
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);

/** The stdio command that runs server-everything. */
export const EVERYTHING_COMMAND = [process.execPath, EVERYTHING, "stdio"];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

/** server-everything over Streamable HTTP as a child process on a free loopback port. */
export interface EverythingHttp {
  url: string;
  stop(): Promise<void>;
}

/** Starts server-everything's Streamable HTTP transport and resolves once it listens. */
export async function startEverythingHttp(): Promise<EverythingHttp> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server-everything did not start listening")), 15_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("listening")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => reject(new Error(`server-everything exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
