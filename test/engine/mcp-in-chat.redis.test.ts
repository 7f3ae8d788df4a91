import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { EVERYTHING_COMMAND } from "../support/everything.js";
import { startSpine, type Spine } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";
import { eventually } from "../support/wait.js";

describe("MCP in chat with server-everything: progress, cancel, elicitation", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine({
      namespace: "everything",
      config: ConfigSchema.parse({
        namespaces: {
          everything: { command: EVERYTHING_COMMAND, prefix: "", ask: false },
          hasty: { command: EVERYTHING_COMMAND, prefix: "", ask: false, elicitTimeoutSeconds: 1.5 },
        },
      }),
    });
  });
  afterAll(async () => {
    await spine.stop();
  });

  const progressOf = (room: string) =>
    spine.rooms.progressShown.filter((p) => p.room === TestRooms.room(room)).map((p) => p.update);

  it("sends a progressToken; progress updates one status message, finished when the answer arrives", async () => {
    await spine.rooms.ask("progress", "/tools");
    const d = await spine.rooms.ask("progress", "/call trigger-long-running-operation duration=1.5 steps=3");
    expect(d.text).toContain("Long running operation completed. Duration: 1.5 seconds, Steps: 3.");
    const updates = progressOf("progress");
    expect(new Set(updates.map((u) => u.key)).size).toBe(1);
    // The last notification may race the result on the wire; the ones before it arrive in order.
    expect(updates.slice(0, 2).map((u) => u.text)).toEqual([
      "⏳ Trigger Long Running Operation Tool: 1/3 (33%)",
      "⏳ Trigger Long Running Operation Tool: 2/3 (67%)",
    ]);
    expect(updates.at(-1)).toMatchObject({
      text: "✓ Trigger Long Running Operation Tool: finished",
      done: true,
    });
    expect(updates.filter((u) => u.done)).toHaveLength(1);
  });

  it("/cancel stops a running call at once and says so; a later /cancel finds nothing running", async () => {
    await spine.rooms.ask("cancel", "/tools");
    const started = Date.now();
    const call = await spine.rooms.say("cancel", "/call trigger-long-running-operation duration=20 steps=20");
    await eventually(() => expect(progressOf("cancel").length).toBeGreaterThan(0), 10_000);
    const cancel = await spine.rooms.say("cancel", "/cancel");
    const d = await spine.rooms.reply(call);
    expect(d.text).toBe(
      "Cancelled: Trigger Long Running Operation Tool was stopped, and its server was told so.",
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(progressOf("cancel").at(-1)).toMatchObject({
      done: true,
      text: "✗ Trigger Long Running Operation Tool: cancelled",
    });
    // The /cancel was taken by the running call: its own turn says nothing.
    expect((await spine.rooms.reply(cancel)).outcome.reply).toBeNull();
    expect((await spine.rooms.ask("cancel", "/cancel")).text).toBe("Nothing is running here to cancel.");
  });

  it("asks an elicitation in the room: a typed value, a button press, Submit", async () => {
    await spine.rooms.ask("elicit", "/tools");
    const call = await spine.rooms.say("elicit", "/call trigger-elicitation-request");
    expect((await spine.rooms.reply(`${call}#1`)).text).toBe(
      "everything asks: Please provide inputs for the following fields:",
    );
    const name = await spine.rooms.reply(`${call}#2`);
    expect(name.text).toContain(
      "(1/13) String\nYour full, legal name\nSend it as your next message (string).",
    );
    expect(name.outcome.reply!.options.map((o) => o.label)).toEqual(["Decline", "Cancel"]);
    const typed = await spine.rooms.say("elicit", "Ada Lovelace");
    const check = await spine.rooms.reply(`${call}#3`);
    expect(check.text).toContain("(2/13) Boolean (optional)\nAgree to the terms and conditions\nYes or No?");
    expect(check.outcome.reply!.options.map((o) => o.label)).toEqual([
      "Yes",
      "No",
      "Skip",
      "Submit",
      "Decline",
      "Cancel",
    ]);
    const yes = check.outcome.reply!.options[0]!.token;
    await spine.rooms.press("elicit", yes);
    const third = await spine.rooms.reply(`${call}#4`);
    const submit = third.outcome.reply!.options.find((o) => o.label === "Submit")!.token;
    await spine.rooms.press("elicit", submit);
    const result = await spine.rooms.reply(call);
    expect(result.text).toContain("✅ User provided the requested information!");
    expect(result.text).toContain("- Name: Ada Lovelace");
    expect(result.text).toContain("- Agreed to terms: true");
    // The answer message was taken by the question: its own turn did not reach the namespace.
    expect((await spine.rooms.reply(typed)).outcome.reply).toBeNull();
  });

  it("validates a typed answer against the requested schema and asks again; Decline declines", async () => {
    await spine.rooms.ask("validate", "/tools");
    const call = await spine.rooms.say("validate", "/call trigger-elicitation-request");
    await spine.rooms.reply(`${call}#2`);
    await spine.rooms.say("validate", "Grace");
    await spine.rooms.reply(`${call}#3`);
    await spine.rooms.say("validate", "Skip");
    await spine.rooms.reply(`${call}#4`);
    await spine.rooms.say("validate", "Skip");
    const email = await spine.rooms.reply(`${call}#5`);
    expect(email.text).toContain("String with email format");
    await spine.rooms.say("validate", "not an email");
    const again = await spine.rooms.reply(`${call}#6`);
    expect(again.text).toContain(
      'That is not a valid String with email format: it must match format "email". Send it again.',
    );
    await spine.rooms.say("validate", "Decline");
    const result = await spine.rooms.reply(call);
    expect(result.text).toContain("❌ User declined to provide the requested information.");
  });

  it("cancels an elicitation nobody answers in time", async () => {
    await spine.rooms.say("timeout", "/tools", { namespace: "hasty" });
    const call = await spine.rooms.say("timeout", "/call trigger-elicitation-request", {
      namespace: "hasty",
    });
    const result = await spine.rooms.reply(call, 20_000);
    expect(result.text).toContain("⚠️ User cancelled the elicitation dialog.");
  });
});
