import { Writable } from "node:stream";
import { pino } from "pino";
import type { DeliveryLedger, Inbox } from "../../src/core/adapter.js";
import { ConfigSchema, type Config } from "../../src/core/config.js";
import type { InboundEvent } from "../../src/core/event.js";
import type { Logger } from "../../src/core/log.js";

/** A configuration with one Telegram section, validated like a loaded file. */
export function telegramConfig(input: {
  apiRoot: string;
  bots: {
    token: string;
    namespace?: string;
    users?: number[];
    groups?: {
      chat: number;
      users: number[];
      respond?: "mentions" | "all";
      namespace?: string;
      topics?: Record<string, string>;
    }[];
    topics?: { name: string; namespace: string; voice?: { tool: string; namespace?: string } }[];
    voice?: { tool: string; namespace?: string };
  }[];
  edits?: { reask?: boolean; windowSeconds?: number };
  mode?: "polling" | "webhook";
  webhook?: { url: string; port: number; host?: string; secretToken: string };
  namespaces?: Record<string, unknown>;
  limits?: { maxFileBytes?: number; maxMessageChars?: number; fileTypes?: string[]; turnsPerMinute?: number };
  /** Telegram's send limits (`telegram.limits`), raised where a test checks what is sent, not its pace. */
  sendLimits?: { botPerSecond?: number; chatPerSecond?: number; groupPerMinute?: number };
}): Config {
  return ConfigSchema.parse({
    namespaces: input.namespaces ?? { feed: { command: ["true"] } },
    limits: input.limits,
    edits: input.edits,
    telegram: {
      apiRoot: input.apiRoot,
      mode: input.mode ?? "polling",
      webhook: input.webhook,
      limits: input.sendLimits,
      // A bot that lists topics has no default namespace unless it names one.
      bots: input.bots.map((b) => ({ ...(b.topics ? {} : { namespace: "feed" }), ...b })),
    },
  });
}

/**
 * An inbox that records every enqueue (duplicates included, so a test sees any
 * replay) and can be told to fail, like a Redis outage would.
 */
export class RecordingInbox implements Inbox {
  readonly calls: InboundEvent[] = [];
  private failures = 0;

  /** The next `n` enqueues throw. */
  failNext(n: number): void {
    this.failures = n;
  }

  /** Events whose id was enqueued more than once. */
  duplicates(): string[] {
    const ids = this.calls.map((e) => e.eventId);
    return ids.filter((id, i) => ids.indexOf(id) !== i);
  }

  async enqueue(event: InboundEvent): Promise<boolean> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error("inbox unavailable");
    }
    const fresh = !this.calls.some((e) => e.eventId === event.eventId);
    this.calls.push(event);
    return fresh;
  }

  /** Every event of the room recorded (none is ever taken off). */
  async queued(room: string): Promise<number> {
    return this.calls.filter((e) => e.room === room).length;
  }
}

/** A delivery ledger kept in memory, shared between attempts of one turn. */
export class MemoryLedger implements DeliveryLedger {
  readonly entries = new Map<string, string>();
  async get(key: string): Promise<string | null> {
    return this.entries.get(key) ?? null;
  }
  async set(key: string, ref: string): Promise<void> {
    this.entries.set(key, ref);
  }
}

/** A logger whose JSON lines a test can read back. */
export function capturingLogger(): { log: Logger; lines: () => Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: "debug" }, stream), lines: () => lines };
}
