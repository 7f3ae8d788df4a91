import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import "../../src/scheduler/scheduler-scripts.js";
import { declaredScripts } from "../../src/scheduler/lua-script.js";
import type { Redis } from "ioredis";
import { DEMO_SERVER } from "../support/spine.js";
import { telegramWorld } from "../support/telegram-world.js";
import { waitFor } from "../support/wait.js";

const TURNS = 40;

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

/** An argument as MONITOR prints it (`\n`, `\\`, `\xc3`…) back to its text. */
function unescaped(printed: string): string {
  const control: Record<string, number> = { n: 10, r: 13, t: 9, a: 7, b: 8 };
  const bytes: number[] = [];
  for (let i = 0; i < printed.length; i++) {
    if (printed[i] !== "\\") {
      bytes.push(...Buffer.from(printed[i]!));
      continue;
    }
    const escaped = printed[++i]!;
    if (escaped === "x") {
      bytes.push(parseInt(printed.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(control[escaped] ?? escaped.charCodeAt(0));
  }
  return Buffer.from(bytes).toString("utf8");
}

/** Each script's name by the SHA1 EVALSHA sends. */
const SCRIPT = new Map(declaredScripts().map((t) => [t.sha, t.id]));

/** The scheduler's clock-driven scripts: looks at the shards, lease renewals. */
const UPKEEP = new Set(["peek-shard", "renew-leases"]);

describe("Redis round trips per turn", () => {
  const world = telegramWorld();
  beforeAll(async () => {
    const base = world.config({
      namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
      bot: { users: Array.from({ length: TURNS + 30 }, (_, i) => 7000 + i) },
    });
    const config = {
      ...base,
      // Limits raised, as a self-hosted Bot API allows: the count is the scheduler's, not waits'.
      telegram: {
        ...base.telegram!,
        limits: { botPerSecond: 100_000, chatPerSecond: 1000, groupPerMinute: 100_000 },
      },
    };
    await world.start(config);
  });

  /** Watches MONITOR while `work` runs; returns the commands on this test's keys, scripts counted once. */
  async function watch(work: () => Promise<void>): Promise<{ all: string[]; scheduler: string[] }> {
    const monitor: Redis = await world.db.redis.monitor();
    // Lines of MONITOR still in the socket when it is closed reach ioredis after it left
    // monitoring, which it reports as an error event ("Command queue state error"): not the test's.
    monitor.on("error", () => undefined);
    const commands: string[] = [];
    const scheduler: string[] = [];
    const evals: string[] = [];
    const upkeep: string[] = [];
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source.startsWith("lua")) return; // inside a script: not a round trip
      if (!args.some((a) => a.includes(world.db.prefix))) return;
      // bullmq's upkeep of the proactive queue (a stalled-jobs check every 2.5 s) runs on a clock, not per turn.
      if (args.some((a) => a.includes(`${world.db.prefix}:{proactive}:`))) return;
      // So does the scheduler's: every half lease a look at each shard, and lease renewals (counted apart).
      // EVALSHA names its script by SHA1; EVAL (a script's first send on a connection) by its text.
      const command = args[0]!.toLowerCase();
      const script = SCRIPT.get(command === "eval" ? sha1(unescaped(args[1] ?? "")) : (args[1] ?? ""));
      if (script && UPKEEP.has(script)) return void upkeep.push(script);
      // The audit trail's sweep of approvals nobody decided runs on a clock too.
      if (args.some((a) => a === world.db.keys.openApprovals)) return void upkeep.push("audit-sweep");
      // Every process reloads the paired users when their version moves: a look every 2 s.
      if (args[1] === world.db.keys.pairedVersion) return void upkeep.push("paired-version");
      commands.push(script ?? args[0]!.toLowerCase());
      // The receiving side's own call: the poller's offset (the flood check rides in the enqueue).
      const edge = args.some((a) => a.includes(":telegram:"));
      if (!edge) scheduler.push(args[0]!.toLowerCase());
      if (command === "eval") evals.push(`${script ?? "?"} ${args.slice(2, 4).join(" ")}`);
    });
    await work();
    monitor.disconnect();
    console.log(`scheduler upkeep while measuring (not per turn): ${upkeep.length} commands`);
    // ioredis sends a script's text (EVAL) the first time it runs on a connection, EVALSHA
    // after: a script used first in the window (a claim of a room woken through Redis) is
    // sent as EVAL once, never again.
    const names = evals.map((e) => e.split(" ")[0]);
    expect(new Set(names).size).toBe(names.length);
    return { all: commands, scheduler };
  }

  let next = 7000;
  const ask = (id: number) =>
    world.standin.userSends(world.bot.token, {
      from: { id, first_name: "U" },
      text: "what should I read today?",
    });
  const answered = (id: number) => world.standin.botMessages(world.bot.token, id).length === 1;

  it("costs the scheduler at most 5 commands a turn, 6 in all with flood control on, plus the wake-ups of other workers when every local slot is busy (redis-cli monitor's view)", async () => {
    // Warm up: the namespace child is started, its tools listed, every script sent once.
    ask(next);
    await waitFor(() => answered(next), 20_000, "warm-up");
    next += 1;
    const ids = Array.from({ length: TURNS }, () => next++);
    const commands = await watch(async () => {
      for (const id of ids) ask(id);
      await waitFor(() => ids.every(answered), 30_000, "every answer");
    });
    const perTurn = commands.all.length / ids.length;
    console.log(`burst: round trips per turn ${perTurn.toFixed(2)}`, countBy(commands.all));
    // Enqueue (with the flood check; the events that arrive together go in one call),
    // claim, the fenced step, the answer's send slot, finish; then the poller's offset. A
    // room that became pending while every local slot is busy also costs the wake-up of
    // another worker: one RPUSH per enqueue call at most (all its rooms), and BLMPOPs that
    // each hand over rooms to claim.
    const count = countBy(commands.all);
    expect(count.rpush ?? 0).toBeLessThanOrEqual(count["enqueue-events"] ?? 0);
    expect(count.blmpop ?? 0).toBeLessThanOrEqual((count["claim-room"] ?? 0) + 2);
    const wakeUp = (c: string) => c === "rpush" || c === "blmpop";
    expect(commands.scheduler.filter((c) => !wakeUp(c)).length / ids.length).toBeLessThanOrEqual(5);
    expect(commands.all.filter((c) => !wakeUp(c)).length / ids.length).toBeLessThanOrEqual(6);
    // Flood control is on as shipped: every sender's turn was counted, inside those round trips.
    expect(
      await world.db.redis.get(
        world.db.schedulerKeys.turnRate(`telegram:${world.bot.id}:${ids[0]}`, `tg:${ids[0]}`),
      ),
    ).toBe("1");
  }, 60_000);

  it("costs the same for turns one at a time", async () => {
    const ids = Array.from({ length: 20 }, () => next++);
    const commands = await watch(async () => {
      for (const id of ids) {
        ask(id);
        await waitFor(() => answered(id), 20_000, `answer ${id}`);
      }
    });
    const perTurn = commands.all.length / ids.length;
    console.log(`one at a time: round trips per turn ${perTurn.toFixed(2)}`, countBy(commands.all));
    // A worker is idle for each turn: the process hands it the room, no wake-up through Redis.
    expect(countBy(commands.all).rpush ?? 0).toBe(0);
    expect(commands.scheduler.length / ids.length).toBeLessThanOrEqual(5);
    expect(perTurn).toBeLessThanOrEqual(6);
  }, 60_000);
});

function countBy(items: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[i] = (out[i] ?? 0) + 1;
  return out;
}
