import { join } from "node:path";
import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { NamespaceConfigSchema } from "../../src/core/config.js";
import { NamespaceError } from "../../src/core/errors.js";
import { silentLogger } from "../../src/core/log.js";
import { PROGRESS_EVERY_MS } from "../../src/namespace/call-guard.js";
import type { CallProgress } from "../../src/namespace/call-options.js";
import { NamespaceClient } from "../../src/namespace/namespace-client.js";
import { namespaceLimitsTotal } from "../../src/ops/metrics.js";

// Issue 25: every quantity a namespace controls has a limit. Each test runs the real
// client against a greedy stdio server (test/support/hostile/greedy-server.ts).

const GREEDY = ["--import", "tsx", join(process.cwd(), "test/support/hostile/greedy-server.ts")];

let clients: NamespaceClient[] = [];
afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  clients = [];
});

function greedy(mode: string, env: Record<string, string> = {}, raw: Record<string, unknown> = {}) {
  const config = NamespaceConfigSchema.parse({
    command: [process.execPath, ...GREEDY],
    env: { GREEDY: mode, ...env },
    ...raw,
  });
  const client = new NamespaceClient("g", config, silentLogger());
  clients.push(client);
  return client;
}

async function failure(promise: Promise<unknown>): Promise<NamespaceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NamespaceError);
  return err as NamespaceError;
}

async function broken(limit: string): Promise<number> {
  const metric = await namespaceLimitsTotal.get();
  return metric.values.find((v) => v.labels.namespace === "g" && v.labels.limit === limit)?.value ?? 0;
}

const textOf = (result: { content?: unknown }) => (result.content as { text: string }[])[0]!.text;

describe("issue 25 High: endless tool listings", () => {
  it("endless tool listing: refused at limits.maxTools with a clear line and a metric", async () => {
    const before = await broken("tools");
    const g = greedy("endless-list");
    const err = await failure(g.tools());
    expect(err.userText).toMatch(
      /^g is not reachable \(it listed more than 2000 tools, over limits\.maxTools\)/,
    );
    expect(await broken("tools")).toBe(before + 1);
  });

  it("endless tool listing of empty pages: refused at limits.maxToolListPages", async () => {
    const g = greedy("endless-list", { GREEDY_PAGE_TOOLS: "0" });
    const err = await failure(g.tools());
    expect(err.userText).toContain("it listed more than 100 pages, over limits.maxToolListPages");
  });

  it("endless tool listing of large tools: refused at limits.maxToolListBytes", async () => {
    const g = greedy("endless-list", { GREEDY_PAGE_TOOLS: "10", GREEDY_TOOL_BYTES: "200000" });
    const err = await failure(g.tools());
    expect(err.userText).toContain(
      "it listed more than 10 MB of tool descriptions, over limits.maxToolListBytes",
    );
  });
});

describe("issue 25 Medium: a server decides how long a call lasts", () => {
  it("progress does not extend a call past timeoutSeconds when maxCallSeconds is not set", async () => {
    const g = greedy(
      "slow-progress",
      { GREEDY_EVERY_MS: "300", GREEDY_RUN_MS: "10000" },
      { timeoutSeconds: 1 },
    );
    await g.start();
    const started = Date.now();
    const err = await failure(g.call("g.slow", {}, { onProgress: () => undefined }));
    expect(err.userText).toMatch(/^g did not answer in time \(g\.slow timed out after 1000 ms\)/);
    // The server would go on for 10 s.
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it("progress extends a call up to maxCallSeconds and no further: the call is ended with the limit's line", async () => {
    const before = await broken("call_seconds");
    const g = greedy(
      "slow-progress",
      { GREEDY_EVERY_MS: "300", GREEDY_RUN_MS: "20000" },
      { timeoutSeconds: 1, maxCallSeconds: 3 },
    );
    await g.start();
    const started = Date.now();
    const err = await failure(g.call("g.slow", {}, { onProgress: () => undefined }));
    const took = Date.now() - started;
    expect(err.userText).toMatch(
      /^g\.slow was stopped after 3 s, the longest a call of g may run \(the operator's limit, maxCallSeconds\)/,
    );
    expect(took).toBeGreaterThanOrEqual(2_900);
    expect(took).toBeLessThan(15_000); // the server would go on for 20 s
    expect(await broken("call_seconds")).toBe(before + 1);
    // The server is not killed for it: the next call is answered.
    expect(textOf(await g.call("g.listings", {}))).toMatch(/^listings: \d+$/);
  });
});

describe("issue 25 Medium: a progress flood", () => {
  it("progress flood: handed on at most twice a second, the latest last", async () => {
    const g = greedy("progress-flood", { GREEDY_RUN_MS: "3000" });
    const seen: CallProgress[] = [];
    await g.start();
    const started = Date.now();
    const result = await g.call("g.flood", {}, { onProgress: (p) => seen.push(p) });
    const took = Date.now() - started;
    const sent = Number(/flood done: (\d+) notifications/.exec(textOf(result))![1]);
    // The server sent thousands; the room's status saw a handful, ending on the last one.
    expect(sent).toBeGreaterThan(100);
    // One at once, then one per PROGRESS_EVERY_MS while the call lasted, and the last.
    expect(seen.length).toBeLessThanOrEqual(Math.ceil(took / PROGRESS_EVERY_MS) + 2);
    // The SDK hands notifications on a tick after it reads them and the answer at once, so
    // those read in the answer's batch are lost (as before the limit): the last one shown
    // is the newest the client had, which on a busy box may be some way before the end.
    const last = seen.at(-1)!;
    expect(last.progress).toBeGreaterThan(0.9 * sent);
    expect(Math.max(...seen.map((p) => p.progress))).toBe(last.progress);
    expect(last.message).toBe(`flood ${last.progress}`);
  });
});

describe("issue 25 Low: elicitation requests per call", () => {
  it("200 elicitation requests at once: one question in the room, then the call is ended", async () => {
    const before = await broken("open_questions");
    const g = greedy("questions", { GREEDY_QUESTIONS: "200" });
    let asked = 0;
    let closed = false;
    const err = await failure(
      g.call(
        "g.quiz",
        {},
        {
          // A person who has not answered yet: the question stays open until the call ends.
          onElicit: (_params, signal) => {
            asked += 1;
            return new Promise<ElicitResult>((resolve) =>
              signal.addEventListener("abort", () => {
                closed = true;
                resolve({ action: "cancel" });
              }),
            );
          },
        },
      ),
    );
    expect(err.userText).toMatch(
      /^g asked a second question while one was still open, so g\.quiz was stopped \(one open question per call\)/,
    );
    expect(asked).toBe(1);
    expect(closed).toBe(true);
    expect(await broken("open_questions")).toBe(before + 1);
  });
});

describe("issue 25 Low: list_changed floods", () => {
  it("200 list_changed a second: at most one listing a second", async () => {
    const g = greedy("list-changed", { GREEDY_EVERY_MS: "5", GREEDY_RUN_MS: "3000" });
    const result = textOf(await g.call("g.churn", {}));
    const sentFor = 3; // seconds of churn: about 600 notifications
    // One listing at connect, then at most one per second of churn (and one trailing).
    const listings = Number(/listings: (\d+)/.exec(textOf(await g.call("g.listings", {})))![1]);
    expect(result).toMatch(/^churn done/);
    expect(listings).toBeLessThanOrEqual(1 + sentFor + 1);
    expect(listings).toBeGreaterThanOrEqual(2);
  });
});
