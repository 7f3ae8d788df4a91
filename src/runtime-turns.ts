import type { PlatformSender, VoiceTool } from "./core/adapter.js";
import { bindingFinder } from "./access/bindings.js";
import type { InboundEvent } from "./core/event.js";
import { liveChannel } from "./control/live-channel.js";
import { RoomInboxReader } from "./scheduler/room-inbox-reader.js";
import type { RoomSignals } from "./scheduler/room-signals.js";
import { takesHistory } from "./engine/arguments.js";
import { Engine } from "./engine/engine.js";
import type { NamespaceRegistry } from "./namespace/namespace-registry.js";
import type { ProactiveService } from "./proactive/proactive-service.js";
import { TurnRunner } from "./scheduler/turn-runner.js";
import type { RecentEvents } from "./scheduler/turn-input.js";
import type { PlatformModule, RuntimeDeps } from "./runtime.js";
import { RedisSessionStore } from "./scheduler/session-store.js";

/** The engine and the turn runner the workers run turns with. */
export function turnRunner(o: {
  deps: RuntimeDeps;
  /** How a call waiting for a /cancel or an answer hears that its room's inbox changed. */
  signals: RoomSignals;
  modules: PlatformModule[];
  senders: Map<string, PlatformSender>;
  namespaces: NamespaceRegistry;
  proactive: () => ProactiveService | undefined;
  /** Events this process queued, by inbox entry (RedisInbox.takeRecent). */
  recent?: RecentEvents;
}): TurnRunner {
  const { config, redis, keys, inbox, limiter, log, paired, audit } = o.deps;
  const { namespaces } = o;
  const store = new RedisSessionStore(redis, keys, config.sessions, log);
  const senderChecks = new Map<string, (event: InboundEvent) => boolean>();
  const voices = new Map<string, (event: InboundEvent) => VoiceTool | undefined>();
  for (const m of o.modules) {
    if (m.sender && m.senderCheck) senderChecks.set(m.sender.platform, m.senderCheck);
    if (m.sender && m.voiceOf) voices.set(m.sender.platform, m.voiceOf);
  }
  const engine = new Engine({
    namespaces,
    offerByRef: (room, ref) => store.offerByRef(room, ref),
    settings: {
      maxMessageChars: config.limits.maxMessageChars,
      choiceSeconds: config.sessions.choiceSeconds,
      slotSeconds: config.sessions.slotSeconds,
      approvalSeconds: config.sessions.approvalSeconds,
      files: {
        maxBytes: config.limits.maxFileBytes,
        timeoutMs: config.limits.fileTimeoutSeconds * 1000,
        types: config.limits.fileTypes,
      },
    },
    senderAllowed: (event) => senderChecks.get(event.platform)?.(event) ?? true,
    access: {
      bindingOf: bindingFinder(config),
      paired: (binding, sender) => paired.has(binding, sender),
      audit,
      enqueue: async (event) => void (await inbox.enqueue(event)),
    },
    voiceOf: (event) => voices.get(event.platform)?.(event),
    proactive: () => o.proactive()?.room,
    log,
  });
  // The last answer per namespace, for the finish path, which must not wait on a namespace.
  const wanted = new Map<string, boolean>();
  const historyWanted = async (namespace: string, cachedOnly = false): Promise<boolean> => {
    if (cachedOnly) return wanted.get(namespace) ?? false;
    try {
      const tools = await namespaces.get(namespace).tools();
      const takes = tools.some((t) => takesHistory(t.inputSchema));
      wanted.set(namespace, takes);
      return takes;
    } catch {
      // The engine reports an unreachable namespace; no tool can take the history then.
      return false;
    }
  };
  const watching = {
    inbox: new RoomInboxReader(redis, keys),
    signals: o.signals,
    recheckMs: Math.round(config.queue.recheckSeconds * 1000),
  };
  return new TurnRunner({
    engine,
    store,
    senders: o.senders,
    limiter,
    historyWanted,
    log,
    channel: (event, sender) => liveChannel(event, sender, watching, log),
    ...(o.recent ? { recent: o.recent } : {}),
    settings: {
      deadlineMs: Math.round(config.queue.deliveryDeadlineSeconds * 1000),
      retryMaxMs: Math.round(config.queue.retryMaxSeconds * 1000),
      typingAfterMs: config.queue.typingAfterSeconds * 1000,
      idleSeconds: config.sessions.idleSeconds,
      maxComputeDeaths: config.queue.maxComputeDeaths,
    },
  });
}
