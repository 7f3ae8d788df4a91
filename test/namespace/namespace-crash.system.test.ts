import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AnswerSchema } from "../../src/core/answer.js";
import { NamespaceConfigSchema } from "../../src/core/config.js";
import { NamespaceError } from "../../src/core/errors.js";
import { silentLogger } from "../../src/core/log.js";
import { NamespaceClient } from "../../src/namespace/namespace-client.js";
import { eventually, waitFor } from "../support/wait.js";

const ECHO_SERVER = ["--import", "tsx", "bench/support/echo-server.ts"];
/** The line for a call lost to a crash: the cause class and a ref for the log, never internals. */
const STOPPED = expect.stringMatching(
  /^echo stopped while answering \(it exited during echo\.\w+\) and is being restarted; the operator has the details \(ref [0-9a-f]{8}\)\.$/,
);
const isStopped = (line: string) => /^echo stopped while answering \(it exited during/.test(line);
const TIMED_OUT = expect.stringMatching(
  /^echo did not answer in time \(echo\.ask timed out after \d+ ms\); please try again \(ref [0-9a-f]{8}\)\.$/,
);

let clients: NamespaceClient[] = [];
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
});

/** An echo namespace child whose every start is appended to a pid log. */
function echo(timeoutSeconds = 30): {
  client: NamespaceClient;
  pids: () => number[];
  arrived: () => string[];
} {
  const dir = mkdtempSync(join(tmpdir(), "roomgate-crash-"));
  const log = join(dir, "pids");
  const callLog = join(dir, "calls");
  const config = NamespaceConfigSchema.parse({
    command: [process.execPath, ...ECHO_SERVER],
    env: { ECHO_PID_LOG: log, ECHO_MARKERS: dir, ECHO_CALL_LOG: callLog },
    timeoutSeconds,
  });
  const client = new NamespaceClient("echo", config, silentLogger());
  clients.push(client);
  const lines = (file: string) =>
    existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
  return { client, pids: () => lines(log).map(Number), arrived: () => lines(callLog) };
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    const result = (await promise) as { structuredContent?: unknown; content?: { text?: string }[] };
    if (result.structuredContent) return AnswerSchema.parse(result.structuredContent).answer;
    return result.content?.[0]?.text ?? "";
  } catch (err) {
    expect(err).toBeInstanceOf(NamespaceError);
    return (err as NamespaceError).userText;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("NamespaceClient when its child crashes or hangs", () => {
  it("retries the calls of other rooms lost to a crash when they are safe to repeat, and only those", async () => {
    const { client, pids, arrived } = echo();
    await client.start();
    const inFlight = [
      outcome(client.call("echo.ask", { question: "sleep:3000 room A" })),
      outcome(client.call("echo.lookup", { question: "sleep:3000 room B" })),
      outcome(client.call("echo.write", { question: "sleep:3000 room C" })),
    ];
    // The crash comes while the child is answering all three (each takes 3 s).
    await waitFor(() => arrived().length === 3, 20_000, "the three calls at the child");
    const crasher = outcome(client.call("echo.write", { question: "crash" }));
    expect(await crasher).toEqual(STOPPED);
    expect(await Promise.all(inFlight)).toEqual([
      "echo: sleep:3000 room A",
      "lookup: sleep:3000 room B",
      STOPPED,
    ]);
    expect(pids()).toHaveLength(2);
  });

  it("answers a question whose first try crashed the child, from the restarted child", async () => {
    const { client, pids } = echo();
    expect(await outcome(client.call("echo.ask", { question: "crash-once please" }))).toBe(
      "echo: crash-once please",
    );
    expect(pids()).toHaveLength(2);
  });

  it("gives a poison question one retry, then the clear line, and restarts with backoff", async () => {
    const { client, pids } = echo();
    // Crashed twice: the message itself is what kills it, and it says so (the scheduler sets it aside).
    expect(await outcome(client.call("echo.ask", { question: "crash" }))).toEqual(
      expect.stringMatching(
        /^This message made echo stop twice, so it was set aside: .*\(ref [0-9a-f]{8}\)\.$/,
      ),
    );
    expect(pids()).toHaveLength(2);
    // The second crash in a row waits longer before the next start than the first.
    await eventually(() => expect(pids()).toHaveLength(3), 5_000);
    expect(await outcome(client.call("echo.ask", { question: "hello" }))).toBe("echo: hello");
  });

  it("does not respawn the child at the rate crashing messages arrive", async () => {
    const { client, pids } = echo();
    await client.start();
    const started = Date.now();
    const lines: string[] = [];
    let sent = 0;
    // A message every 50 ms for 3 s (the arrivals are the scenario's input), each of which
    // kills the child it reaches.
    while (Date.now() - started < 3_000) {
      sent += 1;
      void outcome(client.call("echo.write", { question: "crash" })).then((line) => lines.push(line));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(sent).toBeGreaterThanOrEqual(10);
    await waitFor(() => lines.length === sent, 20_000, "every message answered");
    // Backoff 250 ms, 500 ms, 1 s, 2 s…: a handful of starts, not one per message.
    expect(pids().length).toBeLessThanOrEqual(6);
    expect(new Set(lines)).toEqual(
      new Set(lines.filter((l) => isStopped(l) || l.includes("echo is not reachable ("))),
    );
  });

  it("kills a hung child when a call times out, and the next call is answered by a new one", async () => {
    const { client, pids } = echo(0.8);
    await client.start();
    const [hung] = pids();
    expect(await outcome(client.call("echo.ask", { question: "hang" }))).toEqual(TIMED_OUT);
    await eventually(() => expect(alive(hung!)).toBe(false), 8_000);
    expect(await outcome(client.call("echo.ask", { question: "are you back?" }))).toBe("echo: are you back?");
    expect(pids()).toHaveLength(2);
  });

  it("lets a slow but healthy child live after a timeout", async () => {
    const { client, pids } = echo(0.3);
    await client.start();
    expect(await outcome(client.call("echo.ask", { question: "sleep:1500 slow" }))).toEqual(TIMED_OUT);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await outcome(client.call("echo.ask", { question: "quick" }))).toBe("echo: quick");
    expect(pids()).toHaveLength(1);
  });
});
