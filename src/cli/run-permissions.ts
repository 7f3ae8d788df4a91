import { userInfo } from "node:os";
import { allBindings, type Binding } from "../access/bindings.js";
import type { Config } from "../core/config.js";
import { ConfigError } from "../core/errors.js";
import { createLogger } from "../core/log.js";
import { printable } from "../core/printable.js";
import { AuditLog } from "../sessions/audit-log.js";
import { Keys } from "../sessions/keys.js";
import { PairedUsers } from "../sessions/paired-users.js";
import { PairingCodes } from "../sessions/pairing-codes.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { resolveRedis } from "./redis-target.js";

/** What every operator command here needs: the configuration and where to print. */
interface Common {
  config: Config;
  out?: NodeJS.WritableStream;
}

/** Runs `work` with the Redis the configuration names (a running start's embedded one included). */
async function withRedis<T>(
  config: Config,
  work: (redis: RedisClient, keys: Keys) => Promise<T>,
): Promise<T> {
  // Logs go to stderr: stdout is the command's output (JSON lines for the audit export).
  const target = await resolveRedis(config, createLogger({ level: "warn", destination: 2 }), {
    shared: true,
  });
  try {
    return await work(
      target.connection.client,
      new Keys(config.redis.prefix, { shards: config.queue.shards }),
    );
  } finally {
    await target.stop();
  }
}

function bindingNamed(config: Config, name: string): Binding {
  const bindings = allBindings(config);
  const found = bindings.find((b) => b.name === name);
  if (found) return found;
  const known = bindings.map((b) => b.name).join(", ") || "none configured";
  throw new ConfigError(`no binding named "${name}" (bindings: ${known})`);
}

/** The operator running a command, as the trail names them. */
function operator(): string {
  try {
    return `operator:${userInfo().username}`;
  } catch {
    return "operator";
  }
}

/** `roomgate pair --binding NAME`: prints a one-time code that adds whoever sends it to the binding's users. */
export async function runPair(options: Common & { binding: string }): Promise<number> {
  const out = options.out ?? process.stdout;
  const binding = bindingNamed(options.config, options.binding);
  const { code, expiresAt } = await withRedis(options.config, (redis, keys) =>
    new PairingCodes(redis, keys).create(binding.name, operator()),
  );
  out.write(
    [
      `Pairing code for ${binding.name} (usable once, until ${new Date(expiresAt).toISOString()}):`,
      "",
      `  ${code}`,
      "",
      `Whoever sends "/pair ${code}" to the bot ${where(binding)} is added to its users.`,
      "",
    ].join("\n"),
  );
  return 0;
}

function where(binding: Binding): string {
  if (binding.platform === "telegram") return binding.group ? "(in that group, or directly)" : "(directly)";
  if (binding.platform === "matrix") return "in that room";
  return "in that terminal room";
}

/** A user as the operator typed it, as a sender id: `901` on Telegram is `tg:901`, `alice` in a terminal is `shell:alice`. */
function senderId(binding: Binding, user: string): string {
  if (binding.platform === "telegram" && /^\d+$/.test(user)) return `tg:${user}`;
  if (binding.platform === "shell" && !user.startsWith("shell:")) return `shell:${user}`;
  return user;
}

/** `roomgate users list [--binding NAME]`: each binding's users, from the configuration and from pairing. */
export async function runUsersList(options: Common & { binding?: string }): Promise<number> {
  const out = options.out ?? process.stdout;
  const bindings = options.binding
    ? [bindingNamed(options.config, options.binding)]
    : allBindings(options.config);
  await withRedis(options.config, async (redis, keys) => {
    const paired = new PairedUsers(redis, keys, []);
    for (const binding of bindings) {
      const configured = binding.users === "anyone" ? [] : [...binding.users];
      const lines = configured.map((u) => `${binding.name}  ${printable(String(u))}  configured`);
      for (const { user, record } of await paired.list(binding.name)) {
        // A paired name is whatever the person chose: shown escaped, never acting on the terminal.
        const name = record.name ? `  (${printable(record.name)})` : "";
        const when = new Date(record.pairedAt).toISOString();
        lines.push(`${binding.name}  ${printable(user)}  paired ${when}${name}`);
      }
      if (binding.users === "anyone") lines.unshift(`${binding.name}  (anyone at the terminal)`);
      out.write(lines.length > 0 ? `${lines.join("\n")}\n` : `${binding.name}  (no users)\n`);
    }
  });
  return 0;
}

/** `roomgate users remove --binding NAME USER`: takes a paired user off a binding, with an audit entry. */
export async function runUsersRemove(options: Common & { binding: string; user: string }): Promise<number> {
  const out = options.out ?? process.stdout;
  const binding = bindingNamed(options.config, options.binding);
  const user = senderId(binding, options.user);
  const removed = await withRedis(options.config, async (redis, keys) => {
    const done = await new PairedUsers(redis, keys, []).remove(binding.name, user);
    if (done) {
      await new AuditLog(
        redis,
        keys,
        options.config.audit.keepDays * 24 * 3600_000,
        options.config.audit.maxArgumentBytes,
      ).record({
        type: "pairing.removed",
        at: Date.now(),
        binding: binding.name,
        user,
        by: operator(),
      });
    }
    return done;
  });
  if (removed) {
    out.write(`removed ${user} from ${binding.name}\n`);
    return 0;
  }
  if (binding.users !== "anyone" && binding.users.has(user)) {
    throw new ConfigError(
      `${user} is listed in the configuration of ${binding.name}; remove it there (pairing did not add it)`,
    );
  }
  throw new ConfigError(
    `${user} is not a paired user of ${binding.name} (\`roomgate users list\` shows them)`,
  );
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 };

/** `24h`, `30m`, `7d`, `90s`, or a date (`2025-01-31`, an ISO time): the ms it stands for. */
export function sinceMs(text: string, now = Date.now()): number {
  const match = /^(\d+(?:\.\d+)?)\s*([smhd])$/i.exec(text.trim());
  if (match) return now - Number(match[1]) * UNIT_MS[match[2]!.toLowerCase()]!;
  const at = Date.parse(text);
  if (Number.isNaN(at)) {
    throw new ConfigError(`--since: "${text}" is neither a duration (24h, 30m, 7d) nor a date (2025-01-31)`);
  }
  return at;
}

/** `roomgate audit export --since 24h`: the trail as JSON lines, oldest first. */
export async function runAuditExport(options: Common & { since: string }): Promise<number> {
  const out = options.out ?? process.stdout;
  const from = sinceMs(options.since);
  await withRedis(options.config, async (redis, keys) => {
    const trail = new AuditLog(
      redis,
      keys,
      options.config.audit.keepDays * 24 * 3600_000,
      options.config.audit.maxArgumentBytes,
    );
    // Approvals whose time ran out while nobody swept are recorded before the export reads.
    await trail.sweep();
    for await (const entry of trail.since(from)) {
      out.write(`${JSON.stringify({ ...entry, time: new Date(entry.at).toISOString() })}\n`);
    }
  });
  return 0;
}
