import cronParser from "cron-parser";
import { z } from "zod";

// The configuration of turns that start without a message (DESIGN §8a): schedules,
// hooks, the settings they share, and the `subscribe` keys of bindings.

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses an interval such as `30m`, `2s`, `1h30m` or `500ms` into milliseconds;
 * undefined when it is not one.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (!/^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) {
    total += Number(amount) * UNITS[unit!]!;
  }
  return total > 0 ? Math.round(total) : undefined;
}

/** An interval written as `30m`, `2s`, `1h30m` (or a number of seconds), in milliseconds. */
export const DurationSchema = z.union([z.number().positive(), z.string()]).transform((value, ctx) => {
  const ms = typeof value === "number" ? Math.round(value * 1000) : parseDuration(value);
  if (ms === undefined || ms < 1000) {
    ctx.addIssue({
      code: "custom",
      message: 'an interval of at least one second, like "30m", "2s", "1h30m" or a number of seconds',
    });
    return z.NEVER;
  }
  return ms;
});

/** Whether the runtime knows a time zone name (IANA, e.g. Europe/Berlin). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Why a cron pattern (5 fields, or 6 with seconds first) does not parse in a zone; undefined when it does. */
export function cronProblem(pattern: string, tz?: string): string | undefined {
  if (pattern.trim().split(/\s+/).length < 5) return "a cron pattern has 5 fields (or 6, seconds first)";
  try {
    cronParser.parseExpression(pattern, tz ? { tz } : {});
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const NAME_MESSAGE = "letters, digits, - and _ (it names the schedule or hook in ids and metrics)";

/** A room key (DESIGN §1): `telegram:<botId>:<chatId>[:<topicId>]`, `matrix:<roomId>` or `shell:<name>`. */
export const RoomKeySchema = z
  .string()
  .regex(
    /^(?:telegram:\d+:-?\d+(?::\d+)?|matrix:![^:]+:.+|shell:.+)$/,
    'a room key: "telegram:<botId>:<chatId>", "matrix:!room:example.org" or "shell:<name>"',
  );

/** When a fire was missed while roomgate was down: run it once when back, or skip it. */
export const MissedFireSchema = z.enum(["once", "skip"]);

/** One scheduled ask (DESIGN §8a): a cron pattern (with a time zone) or an interval, and the question. */
export const ScheduleConfigSchema = z
  .strictObject({
    name: z.string().regex(NAME, NAME_MESSAGE),
    room: RoomKeySchema,
    /** The namespace to ask; default: the one the room's binding names. */
    namespace: z.string().min(1).optional(),
    cron: z.string().min(1).optional(),
    every: DurationSchema.optional(),
    /** Time zone of `cron` (IANA name); default UTC. */
    tz: z.string().refine(isTimeZone, "an IANA time zone such as Europe/Berlin").optional(),
    ask: z.string().min(1),
    /** What a fire missed while everything was down does when roomgate is back. */
    missed: MissedFireSchema.default("once"),
    /** Most fires of this schedule that become turns per minute; the rest are skipped. */
    perMinute: z.number().int().positive().default(60),
  })
  .superRefine((s, ctx) => {
    if ((s.cron === undefined) === (s.every === undefined)) {
      ctx.addIssue({ code: "custom", message: "a schedule needs exactly one of `cron` or `every`" });
    }
    if (s.cron !== undefined) {
      const problem = cronProblem(s.cron, s.tz);
      if (problem)
        ctx.addIssue({ code: "custom", path: ["cron"], message: `not a cron pattern: ${problem}` });
    }
    if (s.tz !== undefined && s.every !== undefined) {
      ctx.addIssue({ code: "custom", path: ["tz"], message: "`tz` applies to `cron` only" });
    }
  });
export type ScheduleConfig = z.infer<typeof ScheduleConfigSchema>;

/** One signed webhook: `POST /hooks/<name>` becomes a turn in `room`. */
export const HookConfigSchema = z.strictObject({
  name: z.string().regex(NAME, NAME_MESSAGE),
  room: RoomKeySchema,
  /** The namespace to ask; default: the one the room's binding names. */
  namespace: z.string().min(1).optional(),
  /** The HMAC-SHA256 key the sender signs with; reference it from the environment (`${VAR}`). */
  secret: z.string().min(1),
  /** The question, a template over the JSON body (`{{ body.pipeline }}`); default: the whole body. */
  ask: z.string().min(1).optional(),
  /** Largest body accepted, in bytes; a larger one gets 413. */
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024),
  /** Deliveries accepted per minute; more get 429. */
  perMinute: z.number().int().positive().default(60),
});
export type HookConfig = z.infer<typeof HookConfigSchema>;

/** Settings shared by every proactive turn. */
export const ProactiveSettingsSchema = z
  .strictObject({
    /**
     * Roomgate is down when no process has taken proactive jobs for this long: a
     * schedule's periods that came due then are its missed fires (`missed` decides);
     * every other period is one turn.
     */
    downSeconds: z.number().min(3).default(15),
    /** How many schedules one room may add with /schedule add. */
    roomSchedules: z.number().int().nonnegative().default(10),
    /** The shortest interval /schedule add accepts. */
    minEverySeconds: z.number().positive().default(60),
    /** What becomes of proactive turns held by /mute when the mute ends: delivered, or dropped. */
    afterMute: z.enum(["deliver", "drop"]).default("deliver"),
    /** At most one post per resource per room in this many seconds; later updates are folded into the next. */
    resourceThrottleSeconds: z.number().nonnegative().default(30),
    /** Failed webhook signatures (or unknown hooks) one source address may send per minute; more get 429. */
    badSignaturesPerMinute: z.number().int().positive().default(20),
    /** How long a finished bullmq job is kept for inspection. */
    keepJobsSeconds: z.number().int().positive().default(86_400),
  })
  .prefault({});
export type ProactiveSettings = z.infer<typeof ProactiveSettingsSchema>;

/** Resources a binding watches (`subscribe`), and what an update does (`onUpdate`). */
export const SubscribeSchema = z.array(z.string().min(1)).optional();
/** Default `show`. */
export const OnUpdateSchema = z.enum(["show", "ask"]).optional();
