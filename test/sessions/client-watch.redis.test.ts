import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { RedisLostError } from "../../src/sessions/client-watch.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import { behindProxy, type HeldProxy } from "../support/held-proxy.js";
import { capturingLogger } from "../support/telegram-fixtures.js";
import { staysFalse, waitFor } from "../support/wait.js";

/** What `promise` settled with, once it has; undefined until then. */
function settled<T>(promise: Promise<T>): () => T | undefined {
  let value: T | undefined;
  void promise.then((v) => (value = v));
  return () => value;
}

/** The run's Redis behind a proxy that can stop passing anything, as a hung server does. */
function runRedisBehindProxy(): Promise<{ proxy: HeldProxy; url: string }> {
  return behindProxy(inject("redisUrl"));
}

describe("every Redis client is watched and replaced when it stops answering", () => {
  let proxy: HeldProxy | undefined;
  let connection: RedisConnection | undefined;
  afterEach(() => {
    connection?.close();
    proxy?.close();
  });

  it("puts a new client under a silent one; its users carry on with the scripts and listeners they set up", async () => {
    const setup = await runRedisBehindProxy();
    proxy = setup.proxy;
    connection = RedisConnection.single(setup.url);
    const { log, lines } = capturingLogger();
    const lost: RedisLostError[] = [];
    const client = connection.create({ name: "test client" });
    client.defineCommand("rgEchoTwice", { numberOfKeys: 0, lua: "return ARGV[1] .. ARGV[1]" });
    const readies: number[] = [];
    client.on("ready", () => readies.push(Date.now()));
    const twice = (text: string) =>
      (client as unknown as { rgEchoTwice(t: string): Promise<string> }).rgEchoTwice(text);
    expect(await twice("ab")).toBe("abab");
    expect(client instanceof Redis).toBe(true);
    connection.watchClients({ deadAfterMs: 600, probeEveryMs: 50, log, lost: (err) => lost.push(err) });

    proxy.stall();
    const pending = client.get("some-key").then(
      () => "answered",
      (err: Error) => err.message,
    );
    await waitFor(
      () => lines().find((l) => String(l.msg).includes("completed no command for too long")),
      5_000,
      "the replacement",
    );
    // What waited on the silent client fails as after a lost connection, and callers retry.
    expect(await pending).toMatch(/Connection is closed/);
    proxy.release();
    expect(await twice("cd")).toBe("cdcd");
    await waitFor(() => readies.length >= 2, 5_000, "the new client's ready event, heard through the handle");
    const replaced = lines().find((l) => String(l.msg).includes("completed no command"))!;
    expect(replaced).toMatchObject({ client: "test client", reason: "silent" });
    expect(lost).toEqual([]);
  });

  it("fails what was in flight when the connection dropped, replaced while it reconnects (the fault script's master-kill with Sentinel's default down-after)", async () => {
    const setup = await runRedisBehindProxy();
    proxy = setup.proxy;
    connection = RedisConnection.single(setup.url);
    const { log, lines } = capturingLogger();
    const client = connection.create({ name: "shared" });
    await client.ping();
    const queued = () => (client as unknown as { commandQueue: { length: number } }).commandQueue.length;
    // A command written to the server, its reply never coming: the server dies under it.
    proxy.stall();
    const pending = settled(
      client.get("some-key").then(
        () => "answered",
        (err: Error) => err.message,
      ),
    );
    await waitFor(() => queued() > 0, undefined, "the GET written");
    proxy.cut();
    // ioredis keeps what was in flight to resend once ready, and reconnects: the new
    // connection is accepted and its ready check never answered (a new master's address
    // reached just as the watch gives up on the client).
    await waitFor(() => client.status === "connect", undefined, "the client reconnected, not ready");
    connection.watchClients({ deadAfterMs: 300, probeEveryMs: 50, log, lost: () => undefined });
    await waitFor(
      () => lines().find((l) => String(l.msg).includes("completed no command for too long")),
      5_000,
      "the replacement",
    );
    // Its caller hears of it, as after any lost connection, and retries on the new client.
    expect(await waitFor(pending, 5_000, "the in-flight GET settled")).toMatch(/Connection is closed/);
    proxy.release();
    expect(await client.set("some-key", "v")).toBe("OK");
  });

  it("fails the commands waiting behind an auto-pipeline in flight when the server died, replaced while it reconnects", async () => {
    const setup = await runRedisBehindProxy();
    proxy = setup.proxy;
    connection = RedisConnection.single(setup.url);
    const { log, lines } = capturingLogger();
    const client = connection.create({ name: "shared", autoPipelining: true });
    await client.ping();
    const queued = () => (client as unknown as { commandQueue: { length: number } }).commandQueue.length;
    const outcome = (reply: Promise<unknown>) =>
      settled(
        reply.then(
          () => "answered",
          (err: Error) => err.message,
        ),
      );
    proxy.stall();
    const inFlight = outcome(client.get("some-key"));
    await waitFor(() => queued() > 0, undefined, "the first auto-pipeline written");
    // ioredis runs one auto-pipeline at a time: this one waits for the first to be answered.
    const behind = outcome(client.get("other-key"));
    // The server dies: its connections close and new ones are refused.
    proxy.close();
    await waitFor(() => client.status === "reconnecting", undefined, "the client reconnecting");
    connection.watchClients({ deadAfterMs: 300, probeEveryMs: 50, log, lost: () => undefined });
    await waitFor(
      () => lines().find((l) => String(l.msg).includes("completed no command for too long")),
      5_000,
      "the replacement",
    );
    expect(await waitFor(inFlight, 5_000, "the GET in flight settled")).toMatch(/Connection is closed/);
    expect(await waitFor(behind, 5_000, "the GET behind it settled")).toMatch(/Connection is closed/);
  });

  it("gives up once, naming the client, when the new client does not answer either", async () => {
    const setup = await runRedisBehindProxy();
    proxy = setup.proxy;
    connection = RedisConnection.single(setup.url);
    const { log } = capturingLogger();
    const lost: RedisLostError[] = [];
    const client = connection.create({ name: "lease renewals" });
    await client.ping();
    connection.watchClients({ deadAfterMs: 400, probeEveryMs: 50, log, lost: (err) => lost.push(err) });
    const since = Date.now();
    proxy.stall();
    await waitFor(() => lost.length > 0, 5_000, "the watch to give up");
    // One silent period for the first client, one for its replacement.
    expect(Date.now() - since).toBeGreaterThanOrEqual(800);
    // Only the watch's own timer could give up again: watch for more than its silent period.
    await staysFalse(() => lost.length > 1, 600, "a second give-up");
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(RedisLostError);
    expect(lost[0]!.message).toMatch(/"lease renewals" client has answered no command for \d+ s/);
  });

  it("leaves a client its user closed alone", async () => {
    const setup = await runRedisBehindProxy();
    proxy = setup.proxy;
    connection = RedisConnection.single(setup.url);
    const { log, lines } = capturingLogger();
    const client = connection.create({ name: "closed one" });
    await client.ping();
    connection.watchClients({ deadAfterMs: 200, probeEveryMs: 20, log, lost: () => undefined });
    client.disconnect();
    await waitFor(() => connection!.clientStates().length === 0, undefined, "the closed client let go");
    // Only the watch's own timer could replace it: watch for twice its silent period.
    await staysFalse(
      () => lines().some((l) => String(l.msg).includes("replaced")),
      400,
      "the closed client replaced",
    );
  });
});
