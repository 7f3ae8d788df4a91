import { createHash } from "node:crypto";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { MatrixClient } from "matrix-bot-sdk";
import type { Logger } from "../core/log.js";
import type { OutboundEncryption } from "./crypto/outbound-encryption.js";
import { matrixRoom } from "../core/room.js";
import { edgeTexts } from "../edge/edge-texts.js";
import { StrangerGate } from "../edge/stranger-gate.js";
import type { Keys } from "../sessions/keys.js";
import { trustTexts } from "./crypto/trust-texts.js";

/**
 * What the Matrix adapter says at the edge, sent straight to the homeserver in one
 * attempt (the sync loop never waits out retries for it) and touching no session or
 * queue: a refusal at most once an hour per person and room, a flood notice, and the
 * notice before leaving a room no binding names. In an encrypted room each is encrypted
 * for the room's audience and the person it answers, or not sent at all.
 */
export class EdgeNotices {
  private readonly strangers: StrangerGate;

  constructor(
    private readonly client: MatrixClient,
    private readonly outbound: OutboundEncryption,
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly log: Logger,
  ) {
    this.strangers = new StrangerGate(redis);
  }

  /** True when a stranger's refusal is to be logged now: once an hour per sender. */
  logOnce(sender: string): boolean {
    return this.strangers.logOnce(sender);
  }

  /**
   * Refuses a stranger: one notice an hour per room (a thread does not earn another),
   * in reply to what they sent and in its thread; repeats cost nothing.
   */
  async refuse(roomId: string, eventId: string, sender: string, threadRoot?: string): Promise<void> {
    if (!(await this.strangers.claim(this.keys.refused(matrixRoom(roomId), sender)))) return;
    await this.say(roomId, eventId, sender, edgeTexts.refusal, threadRoot);
  }

  /**
   * Tells the room once that a person's message was not read because the trust mode
   * refuses its sender: a device its owner did not cross-sign (again after an hour, as
   * a stranger's refusal), or a changed identity (once per new identity: `tag`).
   */
  async untrusted(
    roomId: string,
    eventId: string,
    sender: string,
    reason: "untrusted-device" | "identity-changed",
    tag = "",
  ): Promise<boolean> {
    const key = this.keys.notice(matrixRoom(roomId), `${reason}${tag ? `:${tag}` : ""}`, sender);
    const first =
      reason === "identity-changed"
        ? (await this.redis.set(key, "1", "NX")) === "OK"
        : await this.strangers.claim(key);
    if (!first) return false;
    const text =
      reason === "identity-changed" ? trustTexts.identityChanged(sender) : trustTexts.unsignedDevice(sender);
    await this.say(roomId, eventId, sender, text);
    return true;
  }

  /** Leaves a room no binding names, telling it once why; once an hour per room. */
  async leave(roomId: string): Promise<void> {
    if (!(await this.strangers.claim(this.keys.notice(matrixRoom(roomId), "leaving", "bot")))) return;
    this.log.warn({ roomId }, "the Matrix bot is in a room no binding names; leaving");
    await this.send(roomId, "leaving", { msgtype: "m.notice", body: edgeTexts.leaving }, []);
    await this.client
      .leaveRoom(roomId)
      .catch((err: unknown) => this.log.warn({ err, roomId }, "could not leave a room"));
  }

  /** One notice in reply to an event, mentioning its sender, inside the event's thread when it is in one. */
  async say(
    roomId: string,
    eventId: string,
    sender: string,
    text: string,
    threadRoot?: string,
  ): Promise<void> {
    await this.send(roomId, eventId, replyContent(eventId, sender, text, threadRoot), [sender]);
  }

  /**
   * Like `say`, under the transaction id of `seed` (the same seed is the same message at
   * the homeserver, whoever sends it again), and throwing when it was not sent: the
   * caller says so.
   */
  async sayAs(
    seed: string,
    notice: { roomId: string; eventId: string; sender: string; text: string; threadRoot?: string },
  ): Promise<void> {
    const { roomId, eventId, sender, text, threadRoot } = notice;
    await this.attempt(roomId, seed, replyContent(eventId, sender, text, threadRoot), [sender]);
  }

  private async send(
    roomId: string,
    seed: string,
    content: Record<string, unknown>,
    to: string[],
  ): Promise<void> {
    await this.attempt(roomId, seed, content, to).catch((err: unknown) =>
      this.log.warn({ err, roomId }, "could not send an edge notice"),
    );
  }

  private async attempt(
    roomId: string,
    seed: string,
    content: Record<string, unknown>,
    to: string[],
  ): Promise<void> {
    // A transaction id from the room and what is answered: a repeat after a crash is one message.
    const txnId = `rg-edge-${createHash("sha256").update(`${roomId}\n${seed}`).digest("base64url").slice(0, 24)}`;
    const wire = await (await this.outbound.plan(roomId, to)).wire("m.room.message", content);
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/${encodeURIComponent(wire.type)}/${txnId}`;
    await this.client.doRequest("PUT", path, null, wire.content);
  }
}

/** A notice's content: a reply to the event, mentioning its sender, inside the event's thread when it is in one. */
function replyContent(
  eventId: string,
  sender: string,
  text: string,
  threadRoot: string | undefined,
): Record<string, unknown> {
  const reply = { "m.in_reply_to": { event_id: eventId } };
  const relation = threadRoot
    ? { rel_type: "m.thread", event_id: threadRoot, is_falling_back: false, ...reply }
    : reply;
  return { msgtype: "m.notice", body: text, "m.relates_to": relation, "m.mentions": { user_ids: [sender] } };
}
