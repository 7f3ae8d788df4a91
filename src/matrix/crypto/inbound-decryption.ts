import type { Logger } from "../../core/log.js";
import { matrixUndecryptedTotal } from "../../ops/metrics.js";
import type { UntrustedReason } from "../edge/untrusted.js";
import { RoomEventSchema, type RoomEvent } from "../matrix-events.js";
import { UndecryptableEventError } from "./crypto-errors.js";
import type { CryptoDevice } from "./crypto-device.js";
import type { DecryptedEvent } from "./sender-trust.js";
import type { ParkedEvent, UndecryptedEvents } from "./undecrypted-events.js";

/** Where a decrypted event goes: the receiver's normal path, with whether it was history on arrival. */
export type DecryptedSink = (roomId: string, event: RoomEvent, history: boolean) => Promise<void>;

/** Where an event from a sender the trust mode refuses goes (the receiver tells the room once). */
export type UntrustedSink = (
  roomId: string,
  event: RoomEvent,
  reason: UntrustedReason,
  /** For a changed identity, which one (so the room is told once per new identity). */
  identity: string | undefined,
) => Promise<void>;

const untrusted = (err: unknown): (UndecryptableEventError & { code: UntrustedReason }) | undefined =>
  err instanceof UndecryptableEventError &&
  (err.code === "untrusted-device" || err.code === "identity-changed")
    ? (err as UndecryptableEventError & { code: UntrustedReason })
    : undefined;

/**
 * The clear event: the envelope the homeserver vouches for (id, sender, time) with the
 * decrypted type and content. A relation only in the clear part (clients keep
 * `m.relates_to` unencrypted so servers can aggregate) is kept.
 */
export function clearEvent(envelope: RoomEvent, decrypted: DecryptedEvent): RoomEvent {
  const relation = envelope.content["m.relates_to"];
  const content =
    decrypted.content["m.relates_to"] === undefined && relation !== undefined
      ? { ...decrypted.content, "m.relates_to": relation }
      : decrypted.content;
  return { ...envelope, type: decrypted.type, content };
}

/**
 * The receiving side of encrypted rooms: feeds each sync's to-device messages to the
 * device, decrypts room events on their way to the receiver, and keeps the ones whose
 * room key has not come yet (undecrypted-events.ts) until it does — the machine says so
 * for every key it learns — or until a new owner of the device finds the key in its
 * store. An event whose sender the trust mode refuses (a device its owner did not
 * cross-sign, a changed identity) goes to `refused`; undecryptable for another reason (a
 * forged or broken event) is logged and dropped.
 */
export class InboundDecryption {
  private readonly arrived = new Set<string>();

  constructor(
    private readonly device: CryptoDevice,
    private readonly parked: UndecryptedEvents,
    private readonly sink: DecryptedSink,
    private readonly refused: UntrustedSink,
    private readonly log: Logger,
  ) {
    device.onRoomKeys((keys) => {
      for (const k of keys) this.arrived.add(`${k.roomId}|${k.sessionId}`);
    });
  }

  /** Gives the device a sync response's crypto parts, then decrypts what waited for the keys it brought. */
  async receiveSync(raw: unknown): Promise<void> {
    await this.device.receiveSync(raw);
    if (this.arrived.size === 0) return;
    const sessions = new Set(this.arrived);
    this.arrived.clear();
    for (const parked of await this.parked.waiting(sessions)) await this.retry(parked);
  }

  /** Tries every waiting event once (the device was just taken over: its store may hold their keys). */
  async retryAll(): Promise<void> {
    for (const parked of await this.parked.waiting()) await this.retry(parked);
  }

  /** Decrypts a room event and passes it on, or keeps it until its key comes. */
  async handle(roomId: string, event: RoomEvent, history: boolean): Promise<void> {
    let decrypted: DecryptedEvent;
    try {
      decrypted = await this.device.decrypt(roomId, event);
    } catch (err) {
      const refusal = untrusted(err);
      if (refusal) {
        matrixUndecryptedTotal.inc({ outcome: "untrusted" });
        if (!history) await this.refused(roomId, event, refusal.code, refusal.identity);
        return;
      }
      if (!(err instanceof UndecryptableEventError) || err.code === "other") {
        matrixUndecryptedTotal.inc({ outcome: "dropped" });
        this.log.warn(
          { err, roomId, eventId: event.event_id },
          "matrix: encrypted event cannot be decrypted; ignored",
        );
        return;
      }
      const kept = await this.parked.park({
        roomId,
        event,
        history,
        ...(err.sessionId ? { sessionId: err.sessionId } : {}),
      });
      matrixUndecryptedTotal.inc({ outcome: kept ? "waiting" : "dropped" });
      this.log.info(
        { roomId, eventId: event.event_id, sessionId: err.sessionId, code: err.code, kept },
        kept
          ? "matrix: room key not here yet; the event waits for it"
          : "matrix: too many events wait for keys; dropped",
      );
      return;
    }
    await this.sink(roomId, clearEvent(event, decrypted), history);
  }

  private async retry(parked: ParkedEvent): Promise<void> {
    const parsed = RoomEventSchema.safeParse(parked.event);
    if (!parsed.success) return this.parked.done(parked.event.event_id);
    const event = parsed.data;
    let decrypted: DecryptedEvent;
    try {
      decrypted = await this.device.decrypt(parked.roomId, event);
    } catch (err) {
      const refusal = untrusted(err);
      if (refusal) {
        matrixUndecryptedTotal.inc({ outcome: "untrusted" });
        await this.parked.done(event.event_id);
        if (!parked.history) await this.refused(parked.roomId, event, refusal.code, refusal.identity);
        return;
      }
      if (err instanceof UndecryptableEventError && err.code !== "other") return;
      matrixUndecryptedTotal.inc({ outcome: "dropped" });
      this.log.warn({ err, eventId: event.event_id }, "matrix: a waiting event cannot be decrypted; dropped");
      await this.parked.done(event.event_id);
      return;
    }
    this.log.info(
      { roomId: parked.roomId, eventId: event.event_id, waitedMs: Date.now() - parked.parkedAt },
      "matrix: late room key came; event decrypted",
    );
    matrixUndecryptedTotal.inc({ outcome: "decrypted_late" });
    try {
      await this.sink(parked.roomId, clearEvent(event, decrypted), parked.history);
    } catch (err) {
      // Kept: the next key of its session, or the next owner of the device, tries it again.
      this.log.error({ err, eventId: event.event_id }, "matrix: a late-decrypted event could not be handled");
      return;
    }
    await this.parked.done(event.event_id);
  }
}
