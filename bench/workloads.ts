import type { Redis } from "ioredis";
import type { Arm } from "./arms.js";
import type { BotApiStandin, ScheduledMessage } from "./support/bot-api-standin.js";
import { cpuBetween, cpuByPid, rssOf } from "./support/processes.js";
import { analyse, messageText, percentile } from "./support/send-analysis.js";
import { commandsBetween, commandsExecuted } from "./redis-counters.js";

/** One workload: an open-loop rate for a while, or everything at once. */
export interface Workload {
  name: string;
  /** Messages per second offered; Infinity = all available at once. */
  rate: number;
  messages: number;
  /** How long after the last message is available the run may wait for replies. */
  drainMs: number;
}

/** The figures of one arm under one workload. */
export interface Figures {
  arm: string;
  workload: string;
  offered: number;
  delivered: number;
  /** Latency percentiles in ms; Infinity when that share was never answered within the bound. */
  p50: number;
  p99: number;
  /**
   * The latency's parts at p50 and p99 (see DeliveryReport): to the bot having the
   * message, and the bot's own time from then to its reply.
   */
  split: { toBotP50: number; inBotP50: number; inBotP99: number };
  msgsPerSecond: number;
  cpuMsPerTurn: number;
  /**
   * CPU ms per turn split by process: the bot's own process (roomgate, or the floor's
   * grammY bot), its children (the namespace, the tsx loader) and Redis.
   */
  cpuSplit: { process: number; children: number; redis: number };
  /** The bot's own process's CPU over the span from the first message to the last reply, in cores: ~1 is an event loop saturated. */
  processCores: number;
  /** CPU ms a second the arm's processes spend idle (sampled for 2 s before the workload). */
  idleCpuMsPerSecond: number;
  /** How long the measured window lasted, ms (idle time in it included). */
  windowMs: number;
  redisCommandsPerTurn: number;
  /** Commands Redis ran in the window by name (script-internal included), for the breakdown. */
  redisCommands: Map<string, number>;
  rssMiB: number;
  /** Sends to one chat under 1 s apart (a floor ignores the limits; roomgate must not). */
  chatGapsUnder1s: number;
  maxBotPerSecond: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Messages spread over `chats` round robin, each chat's in sequence, on the workload's schedule. */
export function plan(workload: Workload, chats: number[], start: number, seqFrom = 0): ScheduledMessage[] {
  return Array.from({ length: workload.messages }, (_, i) => {
    const chatId = chats[i % chats.length]!;
    const seq = seqFrom + Math.floor(i / chats.length);
    const at = Number.isFinite(workload.rate) ? start + (i * 1000) / workload.rate : start;
    return { at, chatId, text: messageText(chatId, seq) };
  });
}

/** Waits until `count` distinct messages of `token` are answered or the deadline passes. */
async function answered(
  standin: BotApiStandin,
  token: string,
  count: number,
  deadline: number,
): Promise<void> {
  for (;;) {
    const replies = new Set(standin.sends.filter((s) => s.token === token).map((s) => s.text)).size;
    if (replies >= count || performance.now() > deadline) return;
    await sleep(100);
  }
}

/**
 * Runs a workload against an arm that is already started: a warm-up (not measured),
 * then the workload, measuring latency at the stand-in, CPU and memory of the arm's
 * processes (and Redis' for roomgate) and Redis commands.
 */
export async function measure(
  arm: Arm,
  workload: Workload,
  ctx: { standin: BotApiStandin; token: string; chats: number[]; redis: Redis[]; redisPids: number[] },
): Promise<Figures> {
  const { standin, token, chats } = ctx;
  const warm = plan({ name: "warm-up", rate: 25, messages: 100, drainMs: 0 }, chats, performance.now() + 50);
  standin.schedule(token, warm, (chat) => chat);
  await answered(standin, token, warm.length, performance.now() + 60_000);
  const roots = () => [...arm.pids(), ...(arm.usesRedis ? ctx.redisPids : [])];
  // What the arm costs doing nothing (timers, long polls, Redis' own cron): part of every
  // turn's CPU in a window that lasts long, as a backlog paced at 30/s does.
  await sleep(500);
  const idleFrom = cpuByPid(roots());
  const idleStart = performance.now();
  await sleep(2_000);
  const idleCpuMsPerSecond =
    cpuBetween(idleFrom, cpuByPid(roots())) / ((performance.now() - idleStart) / 1000);
  const sendsBefore = standin.sends.length;
  const releasedBefore = standin.released.length;
  const cpuBefore = cpuByPid(roots());
  const windowStart = performance.now();
  const commandsBefore = arm.usesRedis ? await commandsExecuted(ctx.redis) : new Map<string, number>();
  const start = performance.now() + 100;
  const messages = plan(workload, chats, start, 1_000);
  standin.schedule(token, messages, (chat) => chat);
  let rss = 0;
  const sampler = setInterval(() => (rss = Math.max(rss, rssOf(arm.pids()))), 500);
  const lastAt = messages.at(-1)!.at;
  await sleep(Math.max(0, lastAt - performance.now()));
  await answered(standin, token, warm.length + messages.length, lastAt + workload.drainMs);
  clearInterval(sampler);
  const cpuAfter = cpuByPid(roots());
  const cpuMs = cpuBetween(cpuBefore, cpuAfter);
  const only = (pids: number[]) => new Map([...cpuAfter].filter(([pid]) => pids.includes(pid)));
  const processMs = cpuBetween(cpuBefore, only(arm.pids()));
  const redisMs = arm.usesRedis ? cpuBetween(cpuBefore, only(ctx.redisPids)) : 0;
  const windowMs = performance.now() - windowStart;
  const byCommand = arm.usesRedis
    ? commandsBetween(commandsBefore, await commandsExecuted(ctx.redis))
    : new Map();
  const commands = [...byCommand.values()].reduce((a: number, b: number) => a + b, 0);
  const sends = standin.sends.slice(sendsBefore).filter((s) => s.token === token);
  const released = standin.released.slice(releasedBefore).filter((m) => m.token === token);
  const report = analyse(released, sends);
  // Unanswered messages count as slower than any answer, so a percentile they fall into reads as "over the bound".
  const latencies = [...report.latencies, ...Array<number>(report.lost).fill(Number.POSITIVE_INFINITY)];
  const first = Math.min(...released.map((m) => m.availableAt));
  const last = Math.max(...sends.map((s) => s.at));
  const delivered = Math.max(1, report.delivered);
  return {
    arm: arm.name,
    workload: workload.name,
    offered: messages.length,
    delivered: report.delivered,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    split: {
      toBotP50: percentile(report.toBot, 50),
      inBotP50: percentile(report.inBot, 50),
      inBotP99: percentile(report.inBot, 99),
    },
    msgsPerSecond: report.delivered / ((last - first) / 1000),
    cpuMsPerTurn: cpuMs / delivered,
    cpuSplit: {
      process: processMs / delivered,
      children: (cpuMs - processMs - redisMs) / delivered,
      redis: redisMs / delivered,
    },
    processCores: processMs / Math.max(1, last - first),
    idleCpuMsPerSecond,
    windowMs,
    redisCommandsPerTurn: commands / delivered,
    redisCommands: byCommand,
    rssMiB: (rss || rssOf(arm.pids())) / 2 ** 20,
    chatGapsUnder1s: report.chatGapsUnder1s,
    maxBotPerSecond: report.maxBotPerSecond,
  };
}
