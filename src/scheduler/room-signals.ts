import type { Logger } from "../core/log.js";
import { schedulerKeysOf, type KeyLayout, type SchedulerKeys } from "./scheduler-keys.js";
import type { RedisClient } from "../sessions/redis-connection.js";

/** One room's channel in this process: who listens, and the SUBSCRIBE they wait for. */
interface Channel {
  listeners: Set<() => void>;
  subscribed: Promise<unknown>;
}

/**
 * The signals that an event was queued behind a room's running turn (RedisInbox
 * publishes one), heard on one subscriber connection per process, so that a call
 * waiting for a /cancel or an answer reads the room's inbox when something came,
 * whichever process received it. Pub/sub delivers at most once: the inbox stays the
 * record, and after a reconnect every listener is told to read it again.
 */
export class RoomSignals {
  private client: RedisClient | undefined;
  private readonly channels = new Map<string, Channel>();
  private connectedOnce = false;
  private readonly keys: SchedulerKeys;

  constructor(
    /** A new client of its own: a subscribed connection can do nothing else. */
    private readonly create: () => RedisClient,
    layout: KeyLayout,
    private readonly log: Logger,
  ) {
    this.keys = schedulerKeysOf(layout);
  }

  /**
   * Calls `listener` on each signal of the room until the returned function is called;
   * resolves once the subscription is in place, so nothing queued after that is missed.
   */
  async listen(room: string, listener: () => void): Promise<() => void> {
    const name = this.keys.roomSignal(room);
    const client = this.subscriber();
    let channel = this.channels.get(name);
    if (!channel) {
      channel = { listeners: new Set(), subscribed: client.subscribe(name) };
      this.channels.set(name, channel);
    }
    channel.listeners.add(listener);
    const unlisten = () => {
      const current = this.channels.get(name);
      if (!current?.listeners.delete(listener) || current.listeners.size > 0) return;
      this.channels.delete(name);
      client.unsubscribe(name).catch(() => undefined);
    };
    try {
      await channel.subscribed;
    } catch (err) {
      unlisten();
      throw err;
    }
    return unlisten;
  }

  /** Closes the subscriber connection. */
  close(): void {
    this.client?.disconnect();
    this.client = undefined;
    this.channels.clear();
  }

  private subscriber(): RedisClient {
    if (this.client) return this.client;
    const client = this.create();
    client.on("error", (err: Error) => this.log.debug({ err: err.message }, "room signals: redis error"));
    client.on("message", (name: string) => {
      for (const listener of [...(this.channels.get(name)?.listeners ?? [])]) listener();
    });
    // Signals sent while the connection was down are lost: once the channels are
    // subscribed again, every listener reads its room's inbox.
    client.on("ready", () => {
      if (!this.connectedOnce) {
        this.connectedOnce = true;
        return;
      }
      const names = [...this.channels.keys()];
      if (names.length === 0) return;
      client
        .subscribe(...names)
        .then(() => {
          for (const channel of this.channels.values()) for (const listener of channel.listeners) listener();
        })
        .catch(() => undefined);
    });
    this.client = client;
    return client;
  }
}
