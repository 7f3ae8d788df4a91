import { randomBytes } from "node:crypto";
import type { DeliveryContext, PlatformSender } from "../../src/core/adapter.js";
import type { InboundEvent } from "../../src/core/event.js";
import type { ProgressUpdate } from "../../src/core/progress.js";
import type { TurnOutcome } from "../../src/core/reply.js";
import { telegramRoom } from "../../src/core/room.js";
import { renderPlain } from "../../src/render/plain.js";
import type { PlatformFactory, RuntimeDeps } from "../../src/runtime.js";

/** One delivered turn as a person would see it in a terminal room. */
export interface Delivered {
  event: InboundEvent;
  outcome: TurnOutcome;
  text: string;
  at: number;
  /** Delivery order across every TestRooms in this process (Date.now() can tie). */
  seq: number;
}

let deliveries = 0;

/** Test rooms stand in for the Telegram lane; their sender never reads the origin's ids. */
export const TEST_ORIGIN = {
  platform: "telegram",
  botId: 0,
  chatId: 0,
  chatType: "private",
  userId: 0,
} as const;

/**
 * A test double of a chat platform (Hubot's DummyAdapter): `say` enqueues a message
 * through the real inbox and queue; what the real worker delivers is recorded and
 * rendered with the real plain-text renderer. It stands in for the "telegram" lane,
 * so all its rooms share one lane, as the chats of one platform do.
 */
export class TestRooms implements PlatformSender {
  readonly platform = "telegram" as const;
  readonly delivered: Delivered[] = [];
  private deps: RuntimeDeps | undefined;
  private waiters = new Map<string, (d: Delivered) => void>();
  private count = 0;
  private readonly run = randomBytes(3).toString("hex");
  /** Set to make the next deliveries fail, as a platform outage would. */
  failNext = 0;

  constructor(readonly namespace: string) {}

  /** The room key of a test room name. */
  static room(name: string): string {
    return telegramRoom(0, name);
  }

  /** The factory to pass to startRuntime. */
  factory(): PlatformFactory {
    return (deps) => {
      this.deps = deps;
      return { sender: this };
    };
  }

  /** Sends a message from an allowed user and returns its event id. */
  async say(
    room: string,
    text: string,
    options: { allowed?: boolean; eventId?: string; namespace?: string } = {},
  ): Promise<string> {
    this.count += 1;
    const event: InboundEvent = {
      kind: "message",
      text,
      eventId: options.eventId ?? `test:${this.run}:${this.count}`,
      room: TestRooms.room(room),
      namespace: options.namespace ?? this.namespace,
      platform: "telegram",
      sender: { id: "test:alice", allowed: options.allowed ?? true },
      addressed: "direct",
      receivedAt: Date.now(),
      origin: TEST_ORIGIN,
    };
    await this.deps!.inbox.enqueue(event);
    return event.eventId;
  }

  /** Presses a button (a choice token) in a room and waits for what the press delivers. */
  async choose(room: string, token: string): Promise<Delivered> {
    return this.reply(await this.press(room, token));
  }

  /** Presses a button (a choice token) in a room; resolves to the press's event id once it is queued. */
  async press(room: string, token: string): Promise<string> {
    this.count += 1;
    const event: InboundEvent = {
      kind: "choice",
      token,
      eventId: `test:${this.run}:${this.count}`,
      room: TestRooms.room(room),
      namespace: this.namespace,
      platform: "telegram",
      sender: { id: "test:alice", allowed: true },
      addressed: "direct",
      receivedAt: Date.now(),
      origin: TEST_ORIGIN,
    };
    await this.deps!.inbox.enqueue(event);
    return event.eventId;
  }

  /** Sends a message and waits for its delivered reply. */
  async ask(room: string, text: string, options: { allowed?: boolean } = {}): Promise<Delivered> {
    const id = await this.say(room, text, options);
    return this.reply(id);
  }

  /** Waits for the delivery of one event. */
  reply(eventId: string, timeoutMs = 20_000): Promise<Delivered> {
    const done = this.delivered.find((d) => d.event.eventId === eventId);
    if (done) return Promise.resolve(done);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no reply to ${eventId} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.waiters.set(eventId, (d) => {
        clearTimeout(timer);
        resolve(d);
      });
    });
  }

  async deliver(event: InboundEvent, outcome: TurnOutcome, context: DeliveryContext): Promise<string[]> {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error("injected platform outage");
    }
    if (await context.ledger.get("all")) return ["sent"];
    const text = outcome.reply ? renderPlain(outcome.reply).join("\n") : (outcome.toast ?? "");
    deliveries += 1;
    const d: Delivered = { event, outcome, text, at: Date.now(), seq: deliveries };
    this.delivered.push(d);
    await context.ledger.set("all", "sent");
    this.waiters.get(event.eventId)?.(d);
    this.waiters.delete(event.eventId);
    return [`${event.eventId}:0`];
  }

  working(): () => void {
    return () => undefined;
  }

  /** Progress updates shown, in order, per room. */
  readonly progressShown: { room: string; update: ProgressUpdate }[] = [];

  async progress(event: InboundEvent, update: ProgressUpdate): Promise<void> {
    this.progressShown.push({ room: event.room, update });
  }
}
