import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { telegramRoom } from "../../src/core/room.js";
import type { InboundEvent } from "../../src/core/event.js";
import { RedisInbox } from "../../src/scheduler/redis-inbox.js";
import type { TestRedis } from "./redis.js";
import type { StandinBot, StandinUser, StoredMessage, TelegramApiStandin } from "./telegram-api-standin.js";
import type { StandinChat } from "./telegram-standin-wire.js";
import { waitFor } from "./wait.js";

/** The team namespace "h" (test/support/hostile/team-server.ts) as a stdio child, with its call log. */
export function teamNamespace(): {
  config: { command: string[]; env: Record<string, string> };
  calls(): string[];
} {
  const callLog = join(mkdtempSync(join(tmpdir(), "roomgate-team-")), "calls.log");
  return {
    config: {
      command: [
        process.execPath,
        "--import",
        "tsx",
        join(process.cwd(), "test/support/hostile/team-server.ts"),
      ],
      env: { TEAM_CALL_LOG: callLog },
    },
    calls: () => (existsSync(callLog) ? readFileSync(callLog, "utf8").split("\n").filter(Boolean) : []),
  };
}

/** A button shows its label, numbered when the options are also listed in the text ("1. Yes"). */
function labelled(text: string, label: string): boolean {
  return text === label || text.replace(/^\d+\. /, "") === label;
}

/** A Telegram chat (a group, or a direct chat) on the stand-in, seen by one bot: who says what, what the bot answers, who presses what. */
export class StandinGroup {
  constructor(
    private readonly standin: TelegramApiStandin,
    readonly bot: StandinBot,
    readonly chat: StandinChat,
  ) {}

  get room(): string {
    return telegramRoom(this.bot.id, this.chat.id);
  }

  /** The bot's messages in the group so far. */
  messages(): StoredMessage[] {
    return this.standin.botMessages(this.bot.token, this.chat.id);
  }

  /** `from` says `text`; resolves with the text of the next `parts` bot messages. */
  async say(from: StandinUser, text: string, parts = 1): Promise<string> {
    const before = this.messages().length;
    this.standin.userSends(this.bot.token, { from, chat: this.chat, text });
    await waitFor(() => this.messages().length >= before + parts, 30_000, `an answer to "${text}"`);
    await new Promise((r) => setTimeout(r, 100));
    return this.messages()
      .slice(before)
      .map((m) => m.text ?? "")
      .join("\n");
  }

  /** The bot's messages in the group as one member sees them: the room's, and those for them alone. */
  seenBy(user: StandinUser): StoredMessage[] {
    return this.standin.visibleTo(this.bot.token, this.chat.id, user.id);
  }

  /** `from` says `text`; resolves with the text of the next `parts` bot messages `from` sees (theirs alone included). */
  async sayAndSee(from: StandinUser, text: string, parts = 1): Promise<string> {
    const before = this.seenBy(from).length;
    this.standin.userSends(this.bot.token, { from, chat: this.chat, text });
    await waitFor(() => this.seenBy(from).length >= before + parts, 30_000, `what ${from.first_name} sees`);
    return this.seenBy(from)
      .slice(before, before + parts)
      .map((m) => m.text ?? "")
      .join("\n");
  }

  /**
   * `from` presses the button labelled `label` on the newest bot message they see that
   * has it (one for them alone included); resolves with the toast.
   */
  async press(from: StandinUser, label: string): Promise<string | undefined> {
    const message = this.seenBy(from).findLast((m) =>
      m.reply_markup?.inline_keyboard.flat().some((b) => labelled(b.text, label)),
    );
    if (!message) throw new Error(`no message with a "${label}" button`);
    const data = message
      .reply_markup!.inline_keyboard.flat()
      .find((b) => labelled(b.text, label))!.callback_data;
    const ephemeralId = message.ephemeral_message_id as number | undefined;
    const { callbackQueryId } = this.standin.userPresses(this.bot.token, {
      from,
      chatId: this.chat.id,
      messageId: message.message_id,
      ...(ephemeralId === undefined ? {} : { ephemeralId }),
      data,
    });
    const answered = await waitFor(
      () => this.standin.callbackAnswer(callbackQueryId) as { text?: string } | undefined,
      30_000,
      `the press of "${label}" answered`,
    );
    return answered.text;
  }

  /** The callback data of the button labelled `label` on the newest bot message `seenBy` (default: the room) sees. */
  buttonData(label: string, seenBy?: StandinUser): string {
    const message = (seenBy ? this.seenBy(seenBy) : this.messages()).findLast((m) =>
      m.reply_markup?.inline_keyboard.flat().some((b) => labelled(b.text, label)),
    );
    return message!.reply_markup!.inline_keyboard.flat().find((b) => labelled(b.text, label))!.callback_data!;
  }
}

/**
 * A press of a button `who` cannot see (one sent to another member alone), its data
 * replayed: the event as someone with Redis access could queue it into the room's inbox.
 */
export function pressOf(
  group: StandinGroup,
  namespace: string,
  who: StandinUser,
  token: string,
  eventId: string,
): InboundEvent {
  return {
    eventId: `forged:${eventId}`,
    kind: "choice",
    token,
    addressed: "button",
    namespace,
    platform: "telegram",
    receivedAt: Date.now(),
    room: group.room,
    sender: { id: `tg:${who.id}`, name: who.first_name, allowed: true },
    origin: {
      platform: "telegram",
      botId: group.bot.id,
      chatId: group.chat.id,
      chatType: group.chat.type,
      userId: who.id,
    },
  };
}

/** Queues an event straight into a room's inbox, as someone with Redis access could: the worker must re-check it. */
export async function forge(db: TestRedis, event: InboundEvent): Promise<void> {
  const inbox = new RedisInbox(db.scheduler, 3600_000);
  await inbox.enqueue(event);
}

/**
 * Waits until the room's turn for a queued event is over (a turn leaves the inbox at its
 * end): the barrier after which what that event did, or was refused, has happened.
 */
export async function handled(db: TestRedis, room: string, eventId: string): Promise<void> {
  await waitFor(
    async () =>
      !(await db.redis.lrange(db.schedulerKeys.inbox(room), 0, -1)).some(
        (raw) => (JSON.parse(raw) as { eventId?: string }).eventId === eventId,
      ),
    30_000,
    `the turn of ${eventId} over`,
  );
}

/** Runs an operator command (`roomgate pair …`, `users …`, `audit export …`) as the operator would, beside a running start. */
export function operatorCommand(
  args: string[],
  env: Record<string, string>,
): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ["bin/roomgate", ...args], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The audit trail as `roomgate audit export` prints it: one JSON object per line. */
export function exportedTrail(configFile: string, env: Record<string, string>): Record<string, unknown>[] {
  const run = operatorCommand(["audit", "export", "-c", configFile, "--since", "1h"], env);
  if (run.status !== 0) throw new Error(`audit export failed: ${run.stderr}`);
  return run.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
