import { createHash } from "node:crypto";
import type { MatrixClient } from "matrix-bot-sdk";
import { z } from "zod";
import type { DeliveryContext, PlatformSender, SendWindow } from "../core/adapter.js";
import { PermanentSendError, TransientSendError } from "../core/delivery-errors.js";
import type { MatrixConfig } from "../core/config.js";
import { originOn, type InboundEvent } from "../core/event.js";
import { registerSecret, type Logger } from "../core/log.js";
import type { ProgressUpdate } from "../core/progress.js";
import type { Reply, TurnOutcome } from "../core/reply.js";
import { KEYCAPS, renderMatrix } from "../render/matrix.js";
import { DeviceLeaseLostError, EncryptionUnavailableError } from "./crypto/crypto-errors.js";
import { MatrixE2ee } from "./crypto/matrix-e2ee.js";
import type { RoomSendPlan } from "./crypto/outbound-encryption.js";
import { MatrixOriginError } from "./matrix-errors.js";
import { attachmentContent } from "./matrix-media.js";
import { MatrixProgress } from "./matrix-progress.js";
import type { MatrixOrigin } from "../core/origin.js";
import { countedAttempts } from "../ops/send-metrics.js";
import {
  gatedMatrixRequest,
  SEND_RETRY,
  statusOf,
  withMatrixRetry,
  type MatrixRetryPolicy,
} from "./matrix-retry.js";
import { routeSdkLogs } from "./sdk-logging.js";

/** What the Matrix sender needs from the runtime. */
export interface MatrixSenderOptions {
  config: MatrixConfig;
  log: Logger;
  retry?: MatrixRetryPolicy;
  /** How often a running turn renews its typing notification. */
  typingRefreshMs?: number;
  /** The account's E2EE parts, shared with the receiver (the device, when this process owns it). */
  e2ee?: MatrixE2ee;
}

/** The reaction that marks an offer message as chosen. */
export const CHOSEN_MARK = "✅";

const SendResponseSchema = z.object({ event_id: z.string() });

/** How long the homeserver shows one typing notification; renewed well before it lapses. */
const TYPING_TIMEOUT_MS = 30_000;

/**
 * A transaction id derived from the turn and the part, so that a turn retried after a
 * worker died sends with the same ids and the homeserver posts each part once.
 */
function transactionId(turnId: string, partKey: string): string {
  return `rg-${createHash("sha256").update(`${turnId}\n${partKey}`).digest("base64url").slice(0, 32)}`;
}

/** The `m.relates_to` of an answer: a reply to the question, inside its thread when it was in one. */
function answerRelation(origin: MatrixOrigin): Record<string, unknown> {
  const reply = { "m.in_reply_to": { event_id: origin.answerTo } };
  if (!origin.threadRoot) return reply;
  return { rel_type: "m.thread", event_id: origin.threadRoot, is_falling_back: false, ...reply };
}

/**
 * The sending half of the Matrix adapter: renders a turn's reply as `m.notice` events
 * (plain body and HTML), replying to the question in its thread, pre-places keycap
 * reactions on the part that carries options, marks a chosen offer with ✅, and sends
 * each part once per turn even when the turn is retried. In an encrypted room every
 * event and file is encrypted (crypto/outbound-encryption.ts), or nothing is sent.
 */
export class MatrixSender implements PlatformSender {
  readonly platform = "matrix" as const;
  private readonly client: MatrixClient;
  private readonly e2ee: MatrixE2ee;
  private readonly log: Logger;
  private readonly retry: MatrixRetryPolicy;
  private readonly status = new MatrixProgress();

  constructor(private readonly options: MatrixSenderOptions) {
    registerSecret(options.config.accessToken);
    routeSdkLogs(options.log);
    this.log = options.log.child({ platform: "matrix" });
    this.e2ee = options.e2ee ?? new MatrixE2ee(options.config, this.log);
    this.client = this.e2ee.api;
    this.retry = options.retry ?? SEND_RETRY;
  }

  /** Sends the outcome into the event's room; returns the event ids of the reply's parts. */
  async deliver(event: InboundEvent, outcome: TurnOutcome, context: DeliveryContext): Promise<string[]> {
    const origin = originOf(event);
    const plan = await this.plan(origin.roomId, event.sender.id);
    const offer = outcome.chosen?.messageRefs.at(-1);
    if (offer)
      await this.once(context, "chosen", () =>
        this.react(plan, origin.roomId, offer, CHOSEN_MARK, context, "chosen"),
      );
    // Matrix has no toast: a bare toast (a stale or repeated choice) is the only answer an allowed
    // user gets. A stranger's reactions get none, so they cannot make the bot post at will.
    const toast = outcome.toast && !offer && event.sender.allowed ? outcome.toast : undefined;
    const reply: Reply | null =
      outcome.reply ?? (toast ? { blocks: [{ type: "text", text: toast }], options: [] } : null);
    if (!reply) return [];
    const refs: string[] = [];
    for (const [i, part] of renderMatrix(reply).entries()) {
      const content = {
        msgtype: "m.notice",
        body: part.body,
        format: "org.matrix.custom.html",
        formatted_body: part.formattedBody,
        // A proactive turn answers no event and mentions nobody: it is posted into the room.
        ...(origin.answerTo === "" ? {} : { "m.relates_to": answerRelation(origin) }),
        "m.mentions": { user_ids: event.kind === "proactive" ? [] : [event.sender.id] },
      };
      const key = `part:${i}`;
      refs.push(
        await this.once(context, key, () =>
          this.send(plan, origin.roomId, "m.room.message", content, context, key),
        ),
      );
    }
    const carrier = refs.at(-1);
    if (carrier) {
      for (const [i, keycap] of KEYCAPS.slice(0, reply.options.length).entries()) {
        const key = `keycap:${i}`;
        await this.once(context, key, () => this.react(plan, origin.roomId, carrier, keycap, context, key));
      }
    }
    for (const [i, attachment] of (reply.attachments ?? []).entries()) {
      const key = `attach:${i}`;
      await this.once(context, key, async () =>
        this.send(
          plan,
          origin.roomId,
          "m.room.message",
          await attachmentContent(plan, attachment),
          context,
          key,
        ),
      );
    }
    return refs;
  }

  /** Shows a running call's progress: one notice, edited in place with m.replace (matrix-progress.ts). */
  async progress(event: InboundEvent, update: ProgressUpdate): Promise<void> {
    const origin = originOf(event);
    const context = { turnId: `progress:${update.key}`, ledger: noLedger, log: this.log };
    const plan = await this.plan(origin.roomId, event.sender.id);
    // In a thread the status sits in the thread, as the answer will; elsewhere it stands alone.
    const inThread = origin.threadRoot
      ? {
          rel_type: "m.thread",
          event_id: origin.threadRoot,
          is_falling_back: true,
          "m.in_reply_to": { event_id: origin.answerTo },
        }
      : undefined;
    await this.status.update(
      update,
      (content, seq) => this.send(plan, origin.roomId, "m.room.message", content, context, `status:${seq}`),
      inThread,
    );
  }

  /** Shows the bot typing in the event's room, renewed until the returned function is called. */
  working(event: InboundEvent): () => void {
    const origin = originOn(event, "matrix");
    if (!origin) return () => undefined;
    const roomId = origin.roomId;
    // Chained so that "stopped typing" can never overtake a "typing" still in flight.
    let chain = Promise.resolve();
    const typing = (on: boolean): void => {
      chain = chain
        .then(() => this.client.setTyping(roomId, on, TYPING_TIMEOUT_MS))
        .catch((err: unknown) => this.log.debug({ err, roomId }, "matrix typing notification failed"));
    };
    typing(true);
    const timer = setInterval(() => typing(true), this.options.typingRefreshMs ?? TYPING_TIMEOUT_MS / 2);
    timer.unref();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      clearInterval(timer);
      typing(false);
    };
  }

  /** The bot account's send window, shared by every process. */
  private windows(): SendWindow[] {
    const account = createHash("sha256").update(this.options.config.accessToken).digest("hex").slice(0, 16);
    return [{ group: `mx:${account}`, scope: "account", ...ACCOUNT_WINDOW }];
  }

  /** Runs a send unless the turn's ledger says it was already done, and records it. */
  private async once(context: DeliveryContext, key: string, send: () => Promise<string>): Promise<string> {
    const done = await context.ledger.get(key);
    if (done !== null) return done;
    const ref = await send();
    await context.ledger.set(key, ref);
    return ref;
  }

  /**
   * How this delivery goes into the room. An encrypted room this process cannot encrypt
   * for gets nothing: a final failure when the deployment cannot encrypt at all, a retry
   * when the device is owned by another process (the turn finds its way there).
   */
  private async plan(roomId: string, person: string): Promise<RoomSendPlan> {
    try {
      return await (await this.e2ee.ready()).outbound.plan(roomId, [person]);
    } catch (err) {
      if (!(err instanceof EncryptionUnavailableError)) throw err;
      if (this.e2ee.capable) throw new TransientSendError(err.message, { cause: err });
      throw new PermanentSendError(err.message, { cause: err });
    }
  }

  private async react(
    plan: RoomSendPlan,
    roomId: string,
    target: string,
    key: string,
    context: DeliveryContext,
    partKey: string,
  ): Promise<string> {
    const content = { "m.relates_to": { rel_type: "m.annotation", event_id: target, key } };
    return this.send(plan, roomId, "m.reaction", content, context, partKey);
  }

  private async send(
    plan: RoomSendPlan,
    roomId: string,
    type: string,
    content: Record<string, unknown>,
    context: DeliveryContext,
    partKey: string,
  ): Promise<string> {
    const txnId = transactionId(context.turnId, partKey);
    // Encrypted once: every attempt sends the same ciphertext under the same transaction id.
    const wire = await plan.wire(type, content).catch((err: unknown) => {
      if (err instanceof DeviceLeaseLostError) throw new TransientSendError(err.message, { cause: err });
      throw err;
    });
    const path =
      `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}` +
      `/send/${encodeURIComponent(wire.type)}/${encodeURIComponent(txnId)}`;
    const request = countedAttempts(
      "matrix",
      path,
      () => this.client.doRequest("PUT", path, null, wire.content),
      statusOf,
    );
    const response: unknown = context.gate
      ? await gatedMatrixRequest(`send ${type}`, request, context.gate, this.windows(), partKey, context.log)
      : await withMatrixRetry(`send ${type}`, request, context.log, this.retry);
    return SendResponseSchema.parse(response).event_id;
  }
}

/** Status edits are not part of a turn's ledger: each is its own event with its own transaction id. */
const noLedger = { get: async () => null, set: async () => undefined };

/** Only the homeserver's own limits apply to Matrix: a window that its 429s hold, never full otherwise. */
const ACCOUNT_WINDOW = { max: 1_000_000, windowMs: 1000 } as const;

/** Reads back the origin the Matrix receiver stored on the event. */
function originOf(event: InboundEvent): MatrixOrigin {
  const origin = originOn(event, "matrix");
  if (!origin) throw new MatrixOriginError(`event ${event.eventId} is not a Matrix event`);
  return origin;
}
