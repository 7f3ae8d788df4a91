import type { RedisClient } from "./redis-connection.js";

type Listener = (...args: unknown[]) => void;

/** A listener added through the handle: kept so that it moves to the next client too. */
interface Added {
  event: string | symbol;
  listener: Listener;
  /** What the client was given (a wrapper for `once`, so that it is forgotten after it ran). */
  attached: Listener;
}

type ScriptDefinition = Parameters<RedisClient["defineCommand"]>[1];

/**
 * One Redis client as its users hold it, whose ioredis client underneath can be
 * exchanged (`swap`) without any user noticing beyond the commands in flight, which
 * fail as after any lost connection. Everything a user set up on the handle — event
 * listeners, scripts defined with `defineCommand` — is moved to the next client; every
 * other property and method is the current client's. Why: ioredis clients can end for
 * good (a Sentinel `+switch-master` arriving while the client resolves the master ends
 * it with "Connection is closed."), and dozens of objects hold the client they were
 * built with.
 */
export class SwappableClient {
  private current: RedisClient;
  private readonly added: Added[] = [];
  private readonly scripts = new Map<string, ScriptDefinition>();
  /** Methods of the current client bound to it, so a hot path does not bind on every call. */
  private bound = new Map<string | symbol, unknown>();
  /** What users hold: a stand-in for the current client. */
  readonly handle: RedisClient;

  constructor(
    first: RedisClient,
    /** Told when a user closes the client (`disconnect`, `quit`) and when one connects it again. */
    private readonly users: { closed(): void; opened(): void } = { closed: () => {}, opened: () => {} },
  ) {
    this.current = first;
    this.handle = new Proxy(Object.create(null) as object, {
      get: (_, prop) => this.get(prop),
      set: (_, prop, value) => Reflect.set(this.current, prop, value),
      has: (_, prop) => prop in this.current,
      getPrototypeOf: () => Object.getPrototypeOf(this.current) as object,
    }) as RedisClient;
  }

  /** The ioredis client underneath now. */
  get client(): RedisClient {
    return this.current;
  }

  /**
   * Puts `next` underneath: the listeners and scripts added through the handle move to
   * it, and the old client is returned for the caller to close.
   */
  swap(next: RedisClient): RedisClient {
    const old = this.current;
    for (const { event, attached } of this.added) old.removeListener(event, attached);
    for (const [name, definition] of this.scripts) next.defineCommand(name, definition);
    for (const { event, attached } of this.added) next.on(event, attached);
    this.current = next;
    this.bound = new Map();
    return old;
  }

  private get(prop: string | symbol): unknown {
    switch (prop) {
      case "on":
      case "addListener":
        return (event: string | symbol, listener: Listener) => this.listen(event, listener, false);
      case "once":
        return (event: string | symbol, listener: Listener) => this.listen(event, listener, true);
      case "off":
      case "removeListener":
        return (event: string | symbol, listener: Listener) => this.unlisten(event, listener);
      case "disconnect":
      case "quit":
        return (...args: unknown[]) => {
          this.users.closed();
          return (Reflect.get(this.current, prop) as (...a: unknown[]) => unknown).apply(this.current, args);
        };
      case "connect":
        return (...args: unknown[]) => {
          this.users.opened();
          return (this.current.connect as (...a: unknown[]) => unknown).apply(this.current, args);
        };
      case "defineCommand":
        return (name: string, definition: ScriptDefinition) => {
          this.scripts.set(name, definition);
          this.current.defineCommand(name, definition);
        };
    }
    const cached = this.bound.get(prop);
    if (cached !== undefined) return cached;
    const value: unknown = Reflect.get(this.current, prop, this.current);
    if (typeof value !== "function") return value;
    const method = (value as (...args: unknown[]) => unknown).bind(this.current);
    this.bound.set(prop, method);
    return method;
  }

  private listen(event: string | symbol, listener: Listener, once: boolean): RedisClient {
    const entry: Added = { event, listener, attached: listener };
    if (once) {
      entry.attached = (...args) => {
        this.forget(entry);
        this.current.removeListener(event, entry.attached);
        listener(...args);
      };
    }
    this.added.push(entry);
    this.current.on(event, entry.attached);
    return this.handle;
  }

  private unlisten(event: string | symbol, listener: Listener): RedisClient {
    const entry = this.added.find((a) => a.event === event && a.listener === listener);
    if (entry) {
      this.forget(entry);
      this.current.removeListener(event, entry.attached);
    }
    return this.handle;
  }

  private forget(entry: Added): void {
    const at = this.added.indexOf(entry);
    if (at >= 0) this.added.splice(at, 1);
  }
}
