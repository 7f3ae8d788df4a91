import { GrammyError, type Api } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "../core/log.js";
import { loggableError } from "./loggable-error.js";
import type { PrivateTopics } from "./private-topics.js";
import type { ListedTopic } from "./room-binding.js";
import { topicTexts } from "./topic-texts.js";
import type { BotIdentity, TelegramEdge } from "./edge-record.js";

/** Telegram's answers to a send into a topic that no longer exists. */
const TOPIC_GONE = /thread not found|topic_deleted|topic_id_invalid/i;

/** True when Telegram refused a send because its topic is gone (deleted by the person). */
export function isTopicGone(err: unknown): boolean {
  const grammy = err instanceof GrammyError ? err : (err as { cause?: unknown } | null)?.cause;
  return grammy instanceof GrammyError && grammy.error_code === 400 && TOPIC_GONE.test(grammy.description);
}

/**
 * Answers the parts of a chat that are bound to no namespace, at the edge: the General
 * of a chat with topics lists them, and /start there creates the bot's private-chat
 * topics (or finds them again: each gets its one intro line, which also shows whether
 * it still exists; a deleted one is made anew); a topic whose namespace left the
 * configuration is told so. Nothing here reaches a namespace or a session.
 */
export class TopicLobby {
  constructor(
    private readonly api: Api,
    private readonly identity: BotIdentity,
    private readonly topics: PrivateTopics | undefined,
    private readonly log: Logger,
  ) {}

  /** Answers one update from a lobby or a retired topic. */
  async answer(update: Update, seen: TelegramEdge): Promise<void> {
    const { binding, chat } = seen;
    if (seen.press) {
      await this.api
        .answerCallbackQuery(seen.press.id, { text: topicTexts.noAgentToast })
        .catch(() => undefined);
      return;
    }
    if (binding.kind === "retired") {
      const { topic, topics } = binding;
      await this.say(chat.id, topicTexts.retired(topic.name, topic.namespace, topics), topic.threadId);
      return;
    }
    if (binding.kind !== "lobby") return;
    const { config, topicsEnabled } = this.identity;
    if (chat.type === "private" && config.topics.length > 0 && !topicsEnabled) {
      await this.say(chat.id, topicTexts.topicsOff);
      return;
    }
    let listed = binding.topics;
    if (chat.type === "private" && isStart(update) && this.topics) listed = await this.ensureTopics(chat.id);
    // A topic no binding names (one a person made) is a lobby too: the list answers where they asked.
    const asked = seen.edge.topic === undefined ? undefined : Number(seen.edge.topic);
    await this.say(
      chat.id,
      topicTexts.lobby(listed, (t) => topicLink(chat.id, chat.type, t)),
      asked,
    );
  }

  /**
   * Creates the bot's topics in a private chat, or finds them again: a topic the bot
   * made before gets its intro line again, and one Telegram says is gone is made anew.
   */
  private async ensureTopics(chatId: number): Promise<ListedTopic[]> {
    const topics = this.topics!;
    await topics.load(chatId, true);
    const listed: ListedTopic[] = [];
    for (const entry of this.identity.config.topics) {
      const intro = topicTexts.intro(entry.name, entry.namespace);
      const made = topics.byName(chatId, entry.name);
      if (made && (await this.probe(chatId, made.threadId, intro))) {
        if (made.namespace !== entry.namespace)
          await topics.save(chatId, { ...made, namespace: entry.namespace });
        listed.push({ name: entry.name, namespace: entry.namespace, threadId: made.threadId });
        continue;
      }
      const threadId = await this.create(chatId, entry.name);
      if (threadId === undefined) {
        await this.say(chatId, topicTexts.createFailed(entry.name));
        listed.push({ name: entry.name, namespace: entry.namespace });
        continue;
      }
      await topics.save(chatId, { name: entry.name, threadId, namespace: entry.namespace });
      this.log.info(
        {
          botId: this.identity.id,
          chatId,
          topic: entry.name,
          threadId,
          namespace: entry.namespace,
          recreated: !!made,
        },
        made ? "telegram: a deleted topic was made again" : "telegram: topic created",
      );
      await this.say(chatId, intro, threadId);
      listed.push({ name: entry.name, namespace: entry.namespace, threadId });
    }
    return listed;
  }

  /** Sends the intro into a topic the bot made; false when Telegram says the topic is gone. */
  private async probe(chatId: number, threadId: number, text: string): Promise<boolean> {
    try {
      await this.api.sendMessage(chatId, text, { message_thread_id: threadId });
      return true;
    } catch (err) {
      if (isTopicGone(err)) return false;
      this.log.warn({ err: loggableError(err), chatId, threadId }, "telegram: could not reach a topic");
      return true;
    }
  }

  private async create(chatId: number, name: string): Promise<number | undefined> {
    try {
      return (await this.api.createForumTopic(chatId, name)).message_thread_id;
    } catch (err) {
      this.log.warn(
        { err: loggableError(err), botId: this.identity.id, chatId, topic: name },
        "telegram: could not create a topic (is topic mode on in BotFather?)",
      );
      return undefined;
    }
  }

  private async say(chatId: number, text: string, threadId?: number): Promise<void> {
    const where = threadId === undefined ? {} : { message_thread_id: threadId };
    await this.api.sendMessage(chatId, text, where).catch((err: unknown) => {
      this.log.warn(
        { err: loggableError(err), chatId, threadId },
        "telegram: could not answer outside a room",
      );
    });
  }
}

function isStart(update: Update): boolean {
  return /^\/start(@\w+)?(\s|$)/.test(update.message?.text ?? "");
}

/** A link that opens a forum topic (supergroups only: private-chat topics have none). */
function topicLink(chatId: number, type: string, topic: ListedTopic): string | undefined {
  if (type !== "supergroup" || topic.threadId === undefined) return undefined;
  const id = String(chatId);
  return id.startsWith("-100") ? `https://t.me/c/${id.slice(4)}/${topic.threadId}` : undefined;
}
