import type { RecordedSend, ReleasedMessage } from "../support/bot-api-standin.js";
import { RESEND_NOTE } from "../../src/render/telegram.js";
import { UNQUEUED_NOTICE } from "../../src/core/unqueued.js";

/** Private chats that get poison messages in the "poison" scenario, and how many each. */
export const POISON_CHATS = 4;
export const POISON_PER_CHAT = 4;

/** The word that makes the echo namespace's child exit every time it sees it (bench/support/echo-server.ts). */
export const POISON_WORD = "crash";

/** The start of the one line a person gets for a message that crashed its namespace twice. */
const SET_ASIDE = /^This message made \S+ stop twice, so it was set aside/;

const MARK = /m(-?\d+)\.(\d+)/;

/** The message key (`<chat>.<seq>`) a text names, or undefined. */
function keyOf(text: string): string | undefined {
  const mark = MARK.exec(text);
  return mark ? `${mark[1]}.${mark[2]}` : undefined;
}

/**
 * Which messages of the load are poison: `POISON_PER_CHAT` spread over each of the
 * first `POISON_CHATS` private chats' sequences (`counts`: chat id → its messages).
 */
export function poisonKeys(counts: Map<number, number>): Set<string> {
  const keys = new Set<string>();
  const chats = [...counts.keys()].filter((id) => id > 0).slice(0, POISON_CHATS);
  for (const chat of chats) {
    const n = counts.get(chat)!;
    for (let k = 0; k < POISON_PER_CHAT; k += 1) {
      keys.add(`${chat}.${Math.floor((n * (k + 0.5)) / POISON_PER_CHAT)}`);
    }
  }
  return keys;
}

/**
 * The sends with each set-aside line (which names no message) labelled as the answer
 * to the poison message it stands for: the k-th such line of a chat answers the chat's
 * k-th poison message, so the usual checks (lost, duplicated, order) cover them too. A
 * set-aside line in a chat without poison, or more lines than poison messages, stays
 * unlabelled and is counted as a stray reply.
 */
export function labelSetAside(sends: RecordedSend[], poison: Set<string>): RecordedSend[] {
  const queue = new Map<number, string[]>();
  for (const key of [...poison].sort((a, b) => seqOf(a) - seqOf(b))) {
    const chat = Number(key.slice(0, key.lastIndexOf(".")));
    queue.set(chat, [...(queue.get(chat) ?? []), key]);
  }
  return [...sends]
    .sort((a, b) => a.at - b.at)
    .map((s) => {
      if (!SET_ASIDE.test(s.text)) return s;
      const key = queue.get(s.chatId)?.shift();
      return key ? { ...s, text: `m${key} (set aside: ${s.text})` } : s;
    });
}

function seqOf(key: string): number {
  return Number(key.slice(key.lastIndexOf(".") + 1));
}

/**
 * A reply's text without the note a part sent again after an attempt of unknown outcome
 * carries (src/render/telegram.ts): the person sees their answer, honestly marked.
 */
function withoutResendNote(text: string): string {
  const note = `\n\n<i>${RESEND_NOTE}</i>`;
  return text.endsWith(note) ? text.slice(0, -note.length) : text;
}

/** Replies to messages other than the poison ones that are not their echo: what a bystander would see as an error. */
export interface BystanderErrors {
  count: number;
  sample: string[];
  /** The one-line notices "your message waits for Redis" (src/core/unqueued.ts): not errors, counted apart. */
  told: number;
}

/**
 * Counts the replies to every non-poison message whose text is not the echo of that
 * message (an error line such as "echo is not reachable (it is restarting)"), and
 * replies that name no message at all outside the poison chats' set-aside lines.
 */
export function bystanderErrors(
  released: ReleasedMessage[],
  sends: RecordedSend[],
  poison: Set<string>,
): BystanderErrors {
  const texts = new Map<string, string>();
  for (const m of released) {
    const key = keyOf(m.text);
    if (key) texts.set(key, m.text);
  }
  const sample: string[] = [];
  let count = 0;
  let told = 0;
  for (const s of sends) {
    // The person whose message could not be queued is told it will be answered later.
    if (s.text === UNQUEUED_NOTICE) {
      told += 1;
      continue;
    }
    const key = keyOf(s.text);
    if (key && poison.has(key)) continue;
    const asked = key ? texts.get(key) : undefined;
    if (asked !== undefined && withoutResendNote(s.text) === `echo: ${asked}`) continue;
    count += 1;
    if (sample.length < 5) sample.push(`${s.chatId}: ${s.text.slice(0, 120)}`);
  }
  return { count, sample, told };
}
