import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/core/config.js";
import { registry } from "../../src/ops/metrics.js";
import { RESEND_NOTE } from "../../src/render/telegram.js";
import type { Runtime } from "../../src/runtime.js";
import { peakPerSecond, sendGaps } from "../support/send-gaps.js";
import { DEMO_SERVER } from "../support/spine.js";
import type { StandinUser } from "../support/telegram-api-standin.js";
import { capturingLogger } from "../support/telegram-fixtures.js";
import { telegramWorld } from "../support/telegram-world.js";
import { waitFor } from "../support/wait.js";

const world = telegramWorld({ fresh: "test" });

const users = (n: number, from = 1000): StandinUser[] =>
  Array.from({ length: n }, (_, i) => ({ id: from + i, first_name: `U${i}` }));

function config(allowed: StandinUser[], overrides: Partial<Config> = {}): Config {
  const callLog = join(mkdtempSync(join(tmpdir(), "roomgate-limits-")), "calls.log");
  const base = world.config({
    namespaces: {
      feed: {
        command: [process.execPath, DEMO_SERVER],
        env: { ATTEST_TOOLS: "feed", DEMO_CALL_LOG: callLog },
      },
    },
    bot: { users: allowed.map((u) => u.id) },
  });
  return { ...base, ...overrides };
}

function start(cfg: Config, receivers: boolean, log = capturingLogger().log): Promise<Runtime> {
  return world.start(cfg, { receivers, log });
}

const answers = (chatId: number) => world.standin.botMessages(world.bot.token, chatId);

afterEach(() => world.standin.clearInjected("sendMessage"));

/** Turns parked so far to wait for a send window (the metric counts every park that waits for one). */
async function windowParks(): Promise<number> {
  const text = await registry.metrics();
  return Number(
    /roomgate_send_deferrals_total\{platform="telegram",reason="window"\} (\d+)/.exec(text)?.[1] ?? 0,
  );
}

/** The resend counters (parts sent again after an unknown outcome, and those with the person's note). */
async function resendCounts(): Promise<{ unknown: number; noted: number }> {
  const text = await registry.metrics();
  const count = (name: string) =>
    Number(new RegExp(`^${name}\\{platform="telegram"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
  return {
    unknown: count("roomgate_resent_unknown_parts_total"),
    noted: count("roomgate_resent_noted_parts_total"),
  };
}

describe("Telegram limits on every attempt, across processes", () => {
  it("keeps every chat at one send per second while 30% of sends get 429, logging and counting each 429", async () => {
    const people = users(10);
    const cfg = config(people);
    const captured = capturingLogger();
    await start(cfg, true, captured.log);
    await start(cfg, false, captured.log);
    const before = world.standin.calls.length;
    world.standin.injectRandom("sendMessage", 0.3, () => ({
      status: 429,
      retryAfter: 1 + Math.round(Math.random()),
    }));
    for (let round = 0; round < 3; round += 1) {
      for (const person of people)
        world.standin.userSends(world.bot.token, { from: person, text: `/status ${round}` });
    }
    await waitFor(() => people.every((p) => answers(p.id).length >= 3), 60_000, "three answers per chat");
    world.standin.clearInjected("sendMessage");
    const calls = world.standin.calls.slice(before);
    // Every attempt that reached a chat, 429-answered ones included, came a second or more after the previous.
    expect(sendGaps(calls, 1000)).toEqual([]);
    for (const p of people) expect(answers(p.id)).toHaveLength(3);
    const refused = calls.filter((c) => c.method === "sendMessage" && !c.ok);
    expect(refused.length).toBeGreaterThan(0);
    const logged = captured.lines().filter((l) => String(l.msg).includes("429 too many requests"));
    expect(logged.length).toBe(refused.length);
    expect(logged[0]).toMatchObject({ method: "sendMessage" });
    expect(typeof logged[0]!.chatId).toBe("number");
    expect(typeof logged[0]!.retryAfter).toBe("number");
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/roomgate_rate_limited_total\{platform="telegram",method="sendMessage"\} [1-9]/);
  }, 90_000);

  it("sends a part answered 429 again later as it is: no note to the person, no resend logged or counted", async () => {
    const [person] = users(1, 2000);
    const captured = capturingLogger();
    await start(config([person!]), true, captured.log);
    const counted = () => resendCounts();
    const before = await counted();
    // The first attempt is refused: Telegram sent nothing, so the retry is no repeat.
    world.standin.inject("sendMessage", { status: 429, retryAfter: 1 }, 1);
    world.standin.userSends(world.bot.token, { from: person!, text: "/status" });
    await waitFor(() => answers(person!.id).length >= 1, 20_000, "the answer after the 429");
    const attempts = world.standin.callsTo("sendMessage", world.bot.id);
    expect(attempts.filter((c) => !c.ok)).toHaveLength(1);
    expect(answers(person!.id)).toHaveLength(1);
    expect(answers(person!.id)[0]!.text).not.toContain(RESEND_NOTE);
    expect(captured.lines().filter((l) => String(l.msg).includes("earlier attempt of this part"))).toEqual(
      [],
    );
    expect(await counted()).toEqual(before);
  }, 30_000);

  it("answers many chats at the default limits, never more than 30 in a second, waiting held rather than parked", async () => {
    const people = users(90, 3000);
    await start(config(people), true);
    const parksBefore = await windowParks();
    const before = world.standin.calls.length;
    for (const person of people) world.standin.userSends(world.bot.token, { from: person, text: "/status" });
    await waitFor(() => people.every((p) => answers(p.id).length >= 1), 30_000, "an answer per chat");
    const sent = world.standin.calls.slice(before).filter((c) => c.method === "sendMessage");
    expect(peakPerSecond(sent)).toBeLessThanOrEqual(30);
    // How close to 30 a second the backlog is paced is the bench's target ("backlog paced at
    // >= 29 msgs/s", bench/bench-targets.ts): a speed, which a shared box cannot promise here.
    // A room whose slot is booked a little later waits for it held, not parked and claimed again.
    expect((await windowParks()) - parksBefore).toBeLessThan(people.length / 10);
  }, 60_000);

  it("100 chats offering 50 messages a second in all are answered, never over 30 a second nor twice a second in a chat", async () => {
    const people = users(100, 4000);
    await start(config(people), true);
    const before = world.standin.calls.length;
    const t0 = Date.now();
    for (let i = 0; i < 200; i += 1) {
      // Open loop: one message every 20 ms whatever the bot does, chats taken in turn.
      const due = t0 + i * 20;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      world.standin.userSends(world.bot.token, { from: people[i % people.length]!, text: "/status" });
    }
    await waitFor(() => people.every((p) => answers(p.id).length >= 2), 60_000, "two answers per chat");
    const calls = world.standin.calls.slice(before);
    expect(peakPerSecond(calls.filter((c) => c.method === "sendMessage"))).toBeLessThanOrEqual(30);
    expect(sendGaps(calls, 1000)).toEqual([]);
  }, 90_000);

  it("answers a chat that stays under its limits without any added wait", async () => {
    const [alone] = users(1, 5000);
    const captured = capturingLogger();
    await start(config([alone!]), true, captured.log);
    world.standin.userSends(world.bot.token, { from: alone!, text: "/status" });
    await waitFor(() => answers(alone!.id).length >= 1, 20_000, "first answer");
    const lastSend = () => world.standin.callsTo("sendMessage", world.bot.id).at(-1)!.at;
    // From the turn computed to its answer at Telegram: what the send limits add, and only that.
    const added: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      // The chat's window (one a second) has room again once its last answer is a second old.
      const last = lastSend();
      await waitFor(() => Date.now() - last > 1100, undefined, "the chat's window free again");
      const { updateId } = world.standin.userSends(world.bot.token, { from: alone!, text: "/status" });
      await waitFor(() => answers(alone!.id).length >= i + 2, 20_000, `answer ${i + 2}`);
      const computed = captured
        .lines()
        .find((l) => l.turn === `tg:${world.bot.id}:${updateId}` && l.msg === "turn computed");
      added.push(lastSend() - Number(computed!.time));
    }
    // A wait for the window would add a second; one round trip to Redis and one to Telegram do not.
    expect(Math.min(...added)).toBeLessThan(500);
  }, 60_000);
});
