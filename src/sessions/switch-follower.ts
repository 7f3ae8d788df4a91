import type { Socket } from "node:net";
import { Redis, type RedisOptions } from "ioredis";

/** The sentinels of one group, as a Sentinel client is given them. */
export interface SentinelGroupAddress {
  name: string;
  sentinels: { host: string; port: number }[];
  password?: string;
  tls?: boolean;
}

const CHANNEL = "+switch-master";

/**
 * Reconnects a Sentinel client when a sentinel announces (`+switch-master`) a master
 * other than the one the client is connected to; the reconnect asks the sentinels for
 * the master again. It replaces ioredis' `failoverDetector`, which reconnects on every
 * announcement: a failover makes one per sentinel, the others' as they learn of the
 * promotion (about 0.1 s after it) and the leader's at the failover's end, once the
 * replicas follow the new master — which is when a master with `min-replicas-to-write`
 * starts taking writes. That last reconnect, to the master the client already had,
 * held answers back for about a second right then, after every switchover (fault
 * script, round 5). An announcement reaches a client that has lost its master between
 * two tries (`reconnecting`): it tries now instead of at the end of its back-off (up to
 * 2 s, which the processes waited out at different moments: a worker reached the new
 * master 0.4 s before the receiver whose outage notice its bookings had to count).
 * One that is connecting asks the sentinels anyway, and ending its connect midway is
 * what left ioredis 5 clients failing every command ("Connection is closed").
 */
export function followSwitches(client: Redis, group: SentinelGroupAddress): void {
  let subscribers: Redis[] | undefined;
  const onSwitch = (channel: string, message: string) => {
    if (channel !== CHANNEL) return;
    const [name, , , host, port] = message.split(" ");
    if (name !== group.name) return;
    if (client.status === "reconnecting") return tryNow(client);
    if (client.status !== "ready" && client.status !== "connect") return;
    const stream = (client as unknown as { stream?: Socket }).stream;
    if (stream && `${stream.remoteAddress}:${stream.remotePort}` === `${host}:${port}`) return;
    client.disconnect(true);
  };
  // From its first try, not its first connection: a client made while the master is
  // down (the client watch's replacement) has none until the sentinels promote one.
  client.once("connecting", () => {
    if (client.status === "end") return;
    subscribers = group.sentinels.map((sentinel) => {
      const subscriber = new Redis({
        host: sentinel.host,
        port: sentinel.port,
        ...(group.password ? { password: group.password } : {}),
        ...(group.tls ? { tls: {} } : {}),
        maxRetriesPerRequest: null,
        retryStrategy: (times) => Math.min(100 * times, 2000),
      });
      subscriber.on("error", () => undefined);
      subscriber.on("message", onSwitch);
      // ioredis subscribes again by itself after a reconnect.
      subscriber.subscribe(CHANNEL).catch(() => undefined);
      return subscriber;
    });
  });
  client.once("end", () => {
    for (const subscriber of subscribers ?? []) subscriber.disconnect();
    subscribers = [];
  });
}

/** Ends a reconnecting client's back-off: its next try, which asks the sentinels for the master, starts now. */
function tryNow(client: Redis): void {
  const waiting = client as unknown as { reconnectTimeout: NodeJS.Timeout | null };
  if (!waiting.reconnectTimeout) return;
  clearTimeout(waiting.reconnectTimeout);
  waiting.reconnectTimeout = null;
  client.connect().catch(() => undefined);
}

/**
 * A Sentinel client whose copies (`duplicate()`, which bullmq calls for its blocking
 * connections, and MONITOR) follow the sentinels' announcements too: ioredis'
 * `duplicate()` makes a plain client from the options, and `failoverDetector` is off
 * in them, so a copy would otherwise learn of a switch only when its master drops it.
 */
export class FollowingRedis extends Redis {
  constructor(
    options: RedisOptions,
    private readonly group: SentinelGroupAddress,
  ) {
    super(options);
    followSwitches(this, group);
  }

  override duplicate(override?: Partial<RedisOptions>): Redis {
    return new FollowingRedis({ ...this.options, ...override }, this.group);
  }
}
