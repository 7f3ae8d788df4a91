import { describe, expect, it } from "vitest";
import type { InboundEvent } from "../../src/core/event.js";
import { silentLogger } from "../../src/core/log.js";
import { applyChanges, enable, remember, say, toast } from "../../src/engine/changes.js";
import { chain, on, pass, run, StepFailure, when, type Step } from "../../src/engine/composer.js";
import { TurnContext } from "../../src/engine/turn-context.js";
import { newSession } from "../../src/sessions/session.js";

const event: InboundEvent = {
  kind: "message",
  text: "hello",
  eventId: "test:1",
  room: "shell:composer",
  namespace: "feed",
  platform: "shell",
  sender: { id: "shell:alice", allowed: true },
  addressed: "direct",
  receivedAt: 1,
  origin: { platform: "shell" },
};

/** A context whose namespace the combinators never reach: they only pass contexts along. */
function context(): TurnContext {
  return TurnContext.start(
    event,
    { session: newSession("feed"), history: [] },
    {
      namespace: undefined as never,
      settings: { maxMessageChars: 100, choiceSeconds: 60 },
      log: silentLogger(),
      offerByRef: async () => null,
      typedSteps: async () => [],
    },
  );
}

describe("the turn composer", () => {
  it("stops at the first step that handles the turn, after the passes before it", async () => {
    const seen: string[] = [];
    const steps = chain(
      () => pass([enable(["feed.search"])]),
      (ctx) => {
        seen.push(...ctx.session.enabled);
        return [say("handled")];
      },
      () => {
        seen.push("too late");
        return [say("never")];
      },
    );
    const changes = await run(steps, context());
    expect(seen).toEqual(["feed.search"]);
    expect(changes.map((c) => c.type)).toEqual(["enable", "say"]);
    const result = applyChanges(newSession("feed"), changes);
    expect(result.session.enabled).toEqual(["feed.search"]);
    expect(result.outcome.reply?.blocks).toEqual([{ type: "text", text: "handled" }]);
  });

  it("leaves the context a step saw unchanged: changes are values", async () => {
    const ctx = context();
    await run(
      chain(
        () => pass([enable(["feed.search"])]),
        () => [],
      ),
      ctx,
    );
    expect(ctx.session.enabled).toEqual([]);
  });

  it("keeps what passed steps changed when a later step throws", async () => {
    const boom = new Error("boom");
    const steps = chain(
      () => pass([remember("user", "hello")]),
      () => {
        throw boom;
      },
    );
    const failure = await run(steps, context()).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(StepFailure);
    expect((failure as StepFailure).failure).toBe(boom);
    expect((failure as StepFailure).changes).toMatchObject([{ type: "remember", entry: { text: "hello" } }]);
  });

  it("filters by kind and by predicate; a turn that only passes delivers no reply", async () => {
    const onPress: Step = on("choice", () => [toast("pressed")]);
    const never: Step = when(
      () => false,
      () => [say("never")],
    );
    const changes = await run(
      chain(onPress, never, () => pass([toast("passed")])),
      context(),
    );
    const result = applyChanges(newSession("feed"), changes);
    expect(result.outcome).toEqual({ reply: null, toast: "passed" });
    expect(result.session.turns).toBe(1);
  });
});
