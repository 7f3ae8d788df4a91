import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ConfigSchema } from "../../src/core/config.js";
import { registry } from "../../src/ops/metrics.js";
import { DeadLetters } from "../../src/scheduler/dead-letters.js";
import { callsIn, demoNamespaces, startSpine, type Spine } from "../support/spine.js";
import { eventually } from "../support/wait.js";

const run = promisify(execFile);

describe("nothing dropped silently: the dead letters", () => {
  let spine: Spine;
  let configFile: string;
  beforeAll(async () => {
    const demo = demoNamespaces({}, ["feed"]);
    const config = ConfigSchema.parse({
      namespaces: demo.config.namespaces,
      queue: { deliveryDeadlineSeconds: 2 },
    });
    spine = await startSpine({ config, callLog: demo.callLog });
    configFile = join(mkdtempSync(join(tmpdir(), "roomgate-dl-")), "config.yaml");
    writeFileSync(
      configFile,
      stringify({
        redis: { url: spine.redis.url, prefix: spine.redis.prefix },
        namespaces: demo.config.namespaces,
      }),
    );
  });
  afterAll(async () => {
    await spine.stop();
  });

  const cli = (...args: string[]) =>
    run(process.execPath, ["bin/roomgate", "dead-letters", "-c", configFile, ...args], {
      env: { ...process.env, REDIS_URL: spine.redis.url },
    });

  it("retries a failing delivery with backoff until its deadline, then keeps it for an operator to re-queue", async () => {
    const letters = new DeadLetters(spine.redis.redis, spine.redis.scheduler);
    spine.rooms.failNext = 1000;
    const id = await spine.rooms.say("outage", "what should I read today?");
    await eventually(async () => expect(await letters.list()).toHaveLength(1), 15_000);
    const [letter] = await letters.list();
    expect(letter!.reason).toContain("injected platform outage");
    expect(letter!.attempts).toBeGreaterThan(1);
    expect(letter!.outcome).not.toBe("");
    expect(await registry.metrics()).toMatch(/roomgate_dead_letters_total\{platform="telegram"\} 1/);
    // The room is not stuck behind it.
    spine.rooms.failNext = 0;
    await spine.rooms.ask("outage", "/status");

    const listed = await cli();
    expect(listed.stdout).toContain(letter!.id);
    expect(listed.stdout).toContain("answer kept");
    const asksBefore = callsIn(spine.callLog).filter((c) => c.startsWith("feed.ask")).length;
    const requeued = await cli("--requeue", letter!.id);
    expect(requeued.stdout).toContain(`re-queued ${letter!.id}`);
    const delivered = await spine.rooms.reply(id);
    expect(delivered.text).toContain("Today's digest");
    // Delivered from the kept outcome: the namespace was not asked again.
    expect(callsIn(spine.callLog).filter((c) => c.startsWith("feed.ask"))).toHaveLength(asksBefore);
    expect((await cli()).stdout).toContain("no dead letters");
  }, 40_000);

  it("re-queues all of them with --all", async () => {
    spine.rooms.failNext = 1000;
    await spine.rooms.say("outage-a", "/status");
    await spine.rooms.say("outage-b", "/status");
    const letters = new DeadLetters(spine.redis.redis, spine.redis.scheduler);
    await eventually(async () => expect(await letters.list()).toHaveLength(2), 15_000);
    spine.rooms.failNext = 0;
    expect((await cli("--all")).stdout).toContain("re-queued 2");
    await eventually(() =>
      expect(
        spine.rooms.delivered.filter(
          (d) => d.event.room.endsWith("outage-a") || d.event.room.endsWith("outage-b"),
        ),
      ).toHaveLength(2),
    );
  }, 40_000);
});
