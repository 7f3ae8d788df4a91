import { ConfigSchema, type Config } from "../../src/core/config.js";
import type { InboundEvent } from "../../src/core/event.js";
import { silentLogger } from "../../src/core/log.js";
import type { TurnOutcome } from "../../src/core/reply.js";
import { Engine } from "../../src/engine/engine.js";
import { NamespaceRegistry } from "../../src/namespace/namespace-registry.js";
import { renderPlain } from "../../src/render/plain.js";
import { newSession, type HistoryEntry, type Session } from "../../src/sessions/session.js";
import { TEST_ORIGIN, TestRooms } from "./test-room.js";

/** One turn's outcome as a person in a terminal room would read it. */
export interface HarnessTurn {
  event: InboundEvent;
  outcome: TurnOutcome;
  text: string;
}

/**
 * The engine without the spine: the real pipeline of steps and real namespace clients
 * (point them at an in-process MCP server over HTTP: `startToolServer`,
 * `startMcpHttpServer`), each room's session and history kept in memory instead of
 * Redis, no queue, worker or platform. A step's behaviour is tested here in the unit
 * tier; the wiring through Redis and the worker stays in the redis and system tiers.
 * Expiry (offers, slots, approvals) reads `Date.now()`: move it with `vi.setSystemTime`.
 */
export class EngineHarness {
  private readonly rooms = new Map<string, { session: Session; history: HistoryEntry[] }>();
  private readonly namespaces: NamespaceRegistry;
  private readonly engine: Engine;
  private count = 0;

  /** `config` is a configuration file's content (parsed here), `namespace` the rooms' binding. */
  constructor(
    config: Record<string, unknown> | Config,
    private readonly namespace: string,
  ) {
    const parsed = ConfigSchema.parse(config);
    const log = silentLogger();
    this.namespaces = new NamespaceRegistry(parsed, log);
    this.engine = new Engine({
      namespaces: this.namespaces,
      offerByRef: async () => null,
      settings: {
        maxMessageChars: parsed.limits.maxMessageChars,
        choiceSeconds: parsed.sessions.choiceSeconds,
        slotSeconds: parsed.sessions.slotSeconds,
        approvalSeconds: parsed.sessions.approvalSeconds,
      },
      log,
    });
  }

  /** A person in `room` sends `text`; resolves with what the turn answers. */
  ask(room: string, text: string): Promise<HarnessTurn> {
    return this.turn(room, { kind: "message", text });
  }

  /** A person in `room` presses the button whose choice token is `token`. */
  choose(room: string, token: string): Promise<HarnessTurn> {
    return this.turn(room, { kind: "choice", token });
  }

  /** The room's session as the last turn left it. */
  session(room: string): Session {
    return this.state(room).session;
  }

  /** Stops the namespace clients. */
  async close(): Promise<void> {
    await this.namespaces.close();
  }

  private state(room: string): { session: Session; history: HistoryEntry[] } {
    let state = this.rooms.get(room);
    if (!state) {
      state = { session: newSession(this.namespace), history: [] };
      this.rooms.set(room, state);
    }
    return state;
  }

  private async turn(
    room: string,
    what: { kind: "message"; text: string } | { kind: "choice"; token: string },
  ): Promise<HarnessTurn> {
    this.count += 1;
    const event = {
      ...what,
      eventId: `harness:${this.count}`,
      room: TestRooms.room(room),
      namespace: this.namespace,
      platform: "telegram",
      sender: { id: "test:alice", allowed: true },
      addressed: "direct",
      receivedAt: Date.now(),
      origin: TEST_ORIGIN,
    } as InboundEvent;
    const state = this.state(room);
    const result = await this.engine.run(event, state);
    this.rooms.set(room, {
      session: result.session,
      history: result.resetHistory ? [...result.append] : [...state.history, ...result.append],
    });
    const text = result.outcome.reply
      ? renderPlain(result.outcome.reply).join("\n")
      : (result.outcome.toast ?? "");
    return { event, outcome: result.outcome, text };
  }
}
