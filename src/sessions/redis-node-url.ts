import type { RedisOptions } from "ioredis";

/** A node address of a URL, and what the URL says about logging in. */
export interface NodeUrl {
  host: string;
  port: number;
  username?: string;
  password?: string;
  tls: boolean;
}

/** Reads a `redis://` or `rediss://` node URL: host (IPv6 brackets removed), port, login, TLS. */
export function parseNode(text: string): NodeUrl {
  const url = new URL(text);
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  const username = url.username ? decodeURIComponent(url.username) : undefined;
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: Number(url.port || 6379),
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    tls: url.protocol === "rediss:",
  };
}

/** A node as `host:port`, for messages (never the password). */
export function addressOf(text: string): string {
  try {
    const node = parseNode(text);
    return `${node.host}:${node.port}`;
  } catch {
    return "(unreadable address)";
  }
}

/** The ioredis options that reach and log in to one node. */
export function nodeLogin(node: NodeUrl): RedisOptions {
  return {
    host: node.host,
    port: node.port,
    ...(node.username ? { username: node.username } : {}),
    ...(node.password ? { password: node.password } : {}),
    ...(node.tls ? { tls: {} } : {}),
  };
}
