import { StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import type { NamespaceConfig } from "../core/config.js";
import { cappedFetch } from "./capped-fetch.js";
import { CappedStdioTransport } from "./capped-stdio.js";

/**
 * A fresh MCP transport for a namespace: a stdio child process or a Streamable HTTP
 * endpoint, neither reading a reply past `maxReplyBytes` (`limits.maxToolResultBytes`).
 */
export function createTransport(config: NamespaceConfig, maxReplyBytes: number): Transport {
  if (config.command) {
    const [command, ...args] = config.command;
    return new CappedStdioTransport(
      {
        command: command!,
        args,
        cwd: config.cwd,
        // The child gets a minimal environment plus its own settings, so the bot's
        // secrets (tokens in our environment) are not handed to namespace servers.
        env: { ...getDefaultEnvironment(), ...config.env },
        stderr: "pipe",
      },
      maxReplyBytes,
    );
  }
  return new StreamableHTTPClientTransport(new URL(config.url!), {
    requestInit: { headers: config.headers },
    fetch: cappedFetch(maxReplyBytes),
  });
}
