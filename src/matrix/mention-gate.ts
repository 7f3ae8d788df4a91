import type { MatrixClient } from "matrix-bot-sdk";
import type { Addressed } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { isCommandName } from "../engine/commands/index.js";
import { RoomEventSchema, type RoomEvent } from "./matrix-events.js";
import { withMatrixRetry } from "./matrix-retry.js";
import type { RoomBinding } from "./room-policy.js";

/** What the gate decided about one message: taken (why, and its text cleaned) or not addressed to the bot. */
export type GateVerdict = { addressed: Addressed; text: string } | { addressed: false };

/** The parts of a message the gate looks at. */
export interface GatedMessage {
  text: string;
  replyTo?: string;
  threadRoot?: string;
  /** The content carrying `m.mentions` and `formatted_body` (for an edit, its `m.new_content`). */
  content: Record<string, unknown>;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Decides whether a message in a bound room is for the bot, as in Telegram groups: a
 * mention of the bot (intentional `m.mentions`, a pill, or its name or id at the
 * start), a reply to one of its messages, or a command (`/help`, or `!help`, since
 * Element keeps `/` for its own commands). A direct room, or a room bound with
 * `respond: all`, takes every message.
 */
export class MentionGate {
  private readonly direct = new Map<string, boolean>();
  private names: string[];

  constructor(
    private readonly client: MatrixClient,
    private readonly botUserId: string,
    private readonly log: Logger,
  ) {
    this.names = [botUserId, botUserId.slice(1).split(":")[0] ?? ""].filter(Boolean);
  }

  /** Learns the bot's display name, so "Feedbot: hi" counts as a mention too. */
  async learnName(): Promise<void> {
    try {
      const profile = (await this.client.getUserProfile(this.botUserId)) as { displayname?: unknown };
      if (typeof profile.displayname === "string" && profile.displayname.trim()) {
        this.names = [...new Set([...this.names, profile.displayname.trim()])];
      }
    } catch (err) {
      this.log.debug({ err }, "matrix: no display name for the bot; mentions by id and localpart only");
    }
  }

  /** The verdict on one message of a bound room. */
  async check(binding: RoomBinding, message: GatedMessage): Promise<GateVerdict> {
    const stripped = this.stripMention(message.text);
    // "feedbot: !status" (Element's pill, then the command) is the command, as "@bot /status" is in Telegram.
    const command =
      this.command(message.text) ?? (stripped === undefined ? undefined : this.command(stripped));
    if (command !== undefined) return { addressed: "command", text: command };
    const direct = binding.respond === undefined && (await this.isDirect(binding.roomId));
    const mode = binding.respond ?? (direct ? "all" : "mentions");
    if (mode === "all") return { addressed: direct ? "direct" : "all", text: stripped ?? message.text };
    if (stripped !== undefined || this.mentioned(message.content)) {
      return { addressed: "mention", text: stripped ?? message.text };
    }
    for (const target of [message.replyTo, message.threadRoot]) {
      if (target && (await this.sentByBot(binding.roomId, target)))
        return { addressed: "reply", text: message.text };
    }
    return { addressed: false };
  }

  /**
   * The same decision without any request: a command, a mention, `respond: all` or
   * a room already known to be direct; a reply is not looked up.
   */
  checkOffline(binding: RoomBinding, message: GatedMessage): boolean {
    if (this.command(message.text) !== undefined) return true;
    const mode = binding.respond ?? (this.direct.get(binding.roomId) ? "all" : "mentions");
    return mode === "all" || this.stripMention(message.text) !== undefined || this.mentioned(message.content);
  }

  /** `/cmd…` as is, `!cmd…` as `/cmd…` when cmd is one of the commands; otherwise undefined. */
  private command(text: string): string | undefined {
    const match = /^([/!])([A-Za-z][A-Za-z0-9_]*)/.exec(text.trim());
    if (!match || !isCommandName(match[2]!)) return undefined;
    return match[1] === "!" ? `/${text.trim().slice(1)}` : text.trim();
  }

  /** The text without a leading mention of the bot ("feedbot: hi", "@feedbot:server hi"), if it has one. */
  private stripMention(text: string): string | undefined {
    for (const name of this.names) {
      const lead = new RegExp(`^@?${escapeRegExp(name)}(?![\\w-])[\\s,:]*`, "i");
      // Only the mention and its separator go: the rest reaches the namespace as written.
      if (lead.test(text)) return text.replace(lead, "");
    }
    return undefined;
  }

  private mentioned(content: Record<string, unknown>): boolean {
    const mentions = content["m.mentions"] as { user_ids?: unknown } | undefined;
    if (Array.isArray(mentions?.user_ids) && mentions.user_ids.includes(this.botUserId)) return true;
    const html = content.formatted_body;
    return (
      typeof html === "string" &&
      (html.includes(`matrix.to/#/${this.botUserId}`) ||
        html.includes(`matrix.to/#/${encodeURIComponent(this.botUserId)}`))
    );
  }

  /** A direct room: the bot was invited to it as a direct chat (`is_direct` on its membership). */
  private async isDirect(roomId: string): Promise<boolean> {
    const known = this.direct.get(roomId);
    if (known !== undefined) return known;
    let direct = false;
    try {
      const member = (await this.client.getRoomStateEvent(roomId, "m.room.member", this.botUserId)) as {
        is_direct?: unknown;
      };
      direct = member?.is_direct === true;
    } catch (err) {
      this.log.debug(
        { err, roomId },
        "matrix: cannot read the bot's membership; treating the room as a group",
      );
    }
    this.direct.set(roomId, direct);
    return direct;
  }

  private async sentByBot(roomId: string, eventId: string): Promise<boolean> {
    try {
      const raw: unknown = await withMatrixRetry(
        "event fetch",
        () => this.client.getEvent(roomId, eventId),
        this.log,
      );
      const event: RoomEvent | undefined = RoomEventSchema.safeParse(raw).data;
      return event?.sender === this.botUserId;
    } catch (err) {
      this.log.debug({ err, roomId, eventId }, "matrix: cannot fetch the replied-to event");
      return false;
    }
  }
}
