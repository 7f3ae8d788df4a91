import { Cluster } from "ioredis";
import { RoomgateError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { redisClientReplacements, redisReconnects } from "../ops/metrics.js";
import type { RedisClient } from "./redis-connection.js";
import { SwappableClient } from "./swappable-client.js";

/** Why a client was replaced: it ended (ioredis gave up on it), or it stopped answering. */
export type ReplaceReason = "ended" | "silent";

/** No client that answers could be made for this long: the process cannot serve, and says so. */
export class RedisLostError extends RoomgateError {
  constructor(
    readonly client: string,
    readonly silentMs: number,
    readonly lastError: string | undefined,
  ) {
    super(
      `redis: the "${client}" client has answered no command for ${Math.round(silentMs / 1000)} s, and a new client did not either` +
        `${lastError ? ` (last error: ${lastError})` : ""}; exiting so that a supervisor starts this process again`,
    );
  }
}

/** How clients are watched. */
export interface WatchSettings {
  /** A client that has completed no command for this long is replaced (`redis.deadAfterSeconds`). */
  deadAfterMs: number;
  /** How often every watched client is asked a PING. */
  probeEveryMs: number;
  log: Logger;
  /** Called once when no replacement answers either; the process is expected to exit. */
  lost(err: RedisLostError): void;
}

/** One client as the watch sees it. */
interface Watched {
  name: string;
  swappable: SwappableClient;
  build: () => RedisClient;
  /** Local time the current client (or the one before it) last completed a command. */
  answeredAt: number;
  blocksForMs: number;
  /** Since when clients have been replaced without any answering since; undefined while all is well. */
  replacingSince?: number;
  /** The client a PING is outstanding on. */
  probing?: RedisClient;
  lastError?: string;
  /** Its user closed it (`disconnect`): not watched until connected again. */
  closed: boolean;
  /** What the watch attached to the client underneath, taken off when it is swapped out. */
  detach: () => void;
}

/** One watched client's state, for health. */
export interface ClientState {
  name: string;
  /** Milliseconds since it last completed a command. */
  silentMs: number;
  /** How long a blocking command may keep it silent with nothing wrong (its BLMPOP's timeout). */
  blocksForMs: number;
  lastError?: string;
}

/**
 * Watches every Redis client a process holds: each answers a PING every
 * `probeEveryMs`; one that ended (ioredis will not reconnect it) or that completed no
 * command for `deadAfterMs` gets a new ioredis client underneath its handle, so every
 * part holding the handle carries on with the new one. When the new clients complete
 * no command for another `deadAfterMs` either, `lost` is called: a process that
 * cannot reach Redis exits for its supervisor instead of staying alive and deaf.
 */
export class ClientWatch {
  private readonly watched = new Set<Watched>();
  private timer: NodeJS.Timeout | undefined;
  private settings: WatchSettings | undefined;
  private gaveUp = false;

  /** Starts probing with `settings` (until then clients are only tracked). */
  start(settings: WatchSettings): void {
    this.settings = settings;
    clearInterval(this.timer);
    this.timer = setInterval(() => this.tick(), settings.probeEveryMs);
    this.timer.unref();
    const now = Date.now();
    for (const w of this.watched) w.answeredAt = Math.max(w.answeredAt, now);
  }

  /** A handle of a new client made by `build`, watched until closed by its user or by `close`. */
  add(name: string, build: () => RedisClient, blocksForMs = 0): RedisClient {
    const swappable = new SwappableClient(build(), {
      closed: () => {
        entry.closed = true;
      },
      opened: () => {
        entry.closed = false;
        entry.answeredAt = Date.now();
      },
    });
    const entry: Watched = {
      name,
      swappable,
      build,
      answeredAt: Date.now(),
      blocksForMs,
      closed: false,
      detach: () => undefined,
    };
    this.attach(entry);
    this.watched.add(entry);
    return swappable.handle;
  }

  /** Every watched client that is open, with how long it has been silent. */
  states(): ClientState[] {
    const now = Date.now();
    return [...this.watched]
      .filter((w) => !w.closed)
      .map((w) => ({
        name: w.name,
        silentMs: now - w.answeredAt,
        blocksForMs: w.blocksForMs,
        ...(w.lastError ? { lastError: w.lastError } : {}),
      }));
  }

  /** Stops watching and closes every client. */
  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const w of this.watched) {
      w.closed = true;
      w.detach();
      w.swappable.client.disconnect();
    }
    this.watched.clear();
  }

  private attach(w: Watched): void {
    const client = w.swappable.client;
    const ended = () => {
      if (!w.closed && this.settings) this.replace(w, "ended");
    };
    const reconnecting = () => redisReconnects.inc({ client: w.name });
    const error = (err: Error) => (w.lastError = err.message);
    const ready = () => {
      const stream = (client as unknown as { stream?: { remoteAddress?: string; remotePort?: number } })
        .stream;
      this.settings?.log.debug(
        { client: w.name, node: stream ? `${stream.remoteAddress}:${stream.remotePort}` : undefined },
        "redis: a client is connected",
      );
    };
    client.on("end", ended);
    client.on("reconnecting", reconnecting);
    client.on("error", error);
    client.on("ready", ready);
    w.detach = () => {
      client.removeListener("end", ended);
      client.removeListener("reconnecting", reconnecting);
      client.removeListener("error", error);
      client.removeListener("ready", ready);
    };
  }

  private tick(): void {
    const settings = this.settings;
    if (!settings) return;
    const now = Date.now();
    for (const w of this.watched) {
      if (w.closed) continue;
      const client = w.swappable.client;
      if (w.probing !== client) this.probe(w, client);
      if (w.replacingSince !== undefined && now - w.replacingSince > settings.deadAfterMs) {
        this.giveUp(w, now - w.answeredAt);
        return;
      }
      if (w.replacingSince === undefined && now - w.answeredAt > settings.deadAfterMs)
        this.replace(w, "silent");
    }
  }

  private probe(w: Watched, client: RedisClient): void {
    w.probing = client;
    client
      .ping()
      .then(
        () => {
          w.answeredAt = Date.now();
          w.lastError = undefined;
          if (w.replacingSince !== undefined) {
            this.settings?.log.info({ client: w.name }, "redis: the new client answers");
            w.replacingSince = undefined;
          }
        },
        (err: Error) => (w.lastError = err.message),
      )
      .finally(() => {
        if (w.probing === client) w.probing = undefined;
      });
  }

  /** Puts a new ioredis client under the handle; the old one is closed and what waited on it fails. */
  private replace(w: Watched, reason: ReplaceReason): void {
    const settings = this.settings!;
    const silentMs = Date.now() - w.answeredAt;
    let next: RedisClient;
    try {
      next = w.build();
    } catch (err) {
      w.lastError = (err as Error).message;
      this.giveUp(w, silentMs);
      return;
    }
    w.detach();
    const old = w.swappable.swap(next);
    this.attach(w);
    w.replacingSince ??= Date.now();
    redisClientReplacements.inc({ client: w.name, reason });
    settings.log.warn(
      { client: w.name, reason, silentSeconds: Math.round(silentMs / 100) / 10, lastError: w.lastError },
      reason === "ended"
        ? "redis: a client ended and will not reconnect; replaced with a new one"
        : "redis: a client completed no command for too long; replaced with a new one",
    );
    closeNow(old);
  }

  private giveUp(w: Watched, silentMs: number): void {
    if (this.gaveUp) return;
    this.gaveUp = true;
    clearInterval(this.timer);
    this.settings!.lost(new RedisLostError(w.name, silentMs, w.lastError));
  }
}

/** What ioredis keeps of a command it has not answered yet. */
interface Unanswered {
  command: { reject(err: Error): void };
}

/** The parts of an ioredis client (one instance or Sentinel) that closing it for good reaches. */
interface ClosingClient {
  flushQueue(err: Error): void;
  setStatus(status: "end"): void;
  prevCommandQueue?: { shift(): Unanswered | undefined } | null;
}

/**
 * Closes a client that was swapped out, failing every command still waiting on it
 * ("Connection is closed.", which callers retry as after any lost connection), and
 * every command sent to it later (an ended client fails it at once). `disconnect`
 * alone does not: a client stuck reconnecting or resolving a master never emits the
 * close that would, and two kinds of command escape ioredis' own flush — those in
 * flight when the connection dropped, kept apart (`prevCommandQueue`) to resend once
 * ready, and those of the next auto-pipeline, which ioredis sends into the closed
 * client's offline queue once the one in flight has failed. Measured: in the fault
 * script's Sentinel master-kill with the default down-after (30 s, the watch's own
 * limit) the poller's enqueue waited for ever and the bot took no update again. A
 * Cluster keeps its connections' queues per node and ends them itself.
 */
function closeNow(client: RedisClient): void {
  client.on("error", () => undefined);
  client.disconnect();
  const closed = new Error("Connection is closed.");
  if (client instanceof Cluster) {
    (client as unknown as Pick<ClosingClient, "flushQueue">).flushQueue(closed);
    return;
  }
  const closing = client as unknown as ClosingClient;
  closing.setStatus("end");
  closing.flushQueue(closed);
  for (let item = closing.prevCommandQueue?.shift(); item; item = closing.prevCommandQueue?.shift())
    item.command.reject(closed);
}
