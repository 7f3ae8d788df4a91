import { beforeAll, describe, expect, it } from "vitest";
import { EVERYTHING_COMMAND } from "../support/everything.js";
import type { StandinUser } from "../support/telegram-api-standin.js";
import { telegramWorld } from "../support/telegram-world.js";
import { waitFor } from "../support/wait.js";

const ALICE: StandinUser = { id: 901, first_name: "Alice" };
const MALLORY: StandinUser = { id: 966, first_name: "Mallory" };

describe("Telegram with server-everything: progress, elicitation, approvals on the stand-in", () => {
  const world = telegramWorld({ perChatRate: true, username: "everything_standin_bot" });
  beforeAll(async () => {
    const config = world.config({
      namespaces: { everything: { command: EVERYTHING_COMMAND, prefix: "", ask: false } },
      bot: { namespace: "everything", users: [ALICE.id] },
    });
    await world.start(config);
  });

  const messages = () => world.standin.botMessages(world.bot.token, ALICE.id);
  async function send(text: string, count: number) {
    world.standin.userSends(world.bot.token, { from: ALICE, text });
    await waitFor(() => messages().length >= count, 30_000, `message ${count}`);
    return messages();
  }

  it("edits one status message in place, at most once per 2 s, finished when the answer arrives", async () => {
    await send("/tools", 1);
    const before = messages().length;
    const all = await send("/call trigger-long-running-operation duration=6 steps=6", before + 2);
    await waitFor(
      () => messages().some((m) => m.text?.includes("Long running operation completed")),
      30_000,
      "answer",
    );
    const status = all.slice(before).find((m) => /^[⏳✓]/u.test(m.text ?? ""))!;
    await waitFor(() => status.text!.startsWith("✓"), 10_000, "the finished status");
    expect(status.text).toBe("✓ Trigger Long Running Operation Tool: finished");
    expect(status.sent!.edits).toBeGreaterThanOrEqual(2);
    const times = status.sent!.editTimes!;
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1900);
    // One status message, not one per update.
    expect(messages().filter((m) => /^[⏳✓]/u.test(m.text ?? ""))).toHaveLength(1);
  });

  it("asks an elicitation with inline buttons; a stranger's press is not an answer", async () => {
    const before = messages().length;
    await send("/call trigger-elicitation-request", before + 2);
    await send("Ada", before + 3);
    const check = messages().at(-1)!;
    expect(check.text).toContain("Yes or No?");
    const buttons = check.reply_markup!.inline_keyboard.flat();
    expect(buttons.map((b) => b.text.replace(/^\d+\.\s*/, ""))).toEqual([
      "Yes",
      "No",
      "Skip",
      "Submit",
      "Decline",
      "Cancel",
    ]);
    const stranger = world.standin.userPresses(world.bot.token, {
      from: MALLORY,
      chatId: ALICE.id,
      messageId: check.message_id,
      data: buttons[4]!.callback_data!,
    });
    // The stranger's toast is the edge's last word on the press: nothing of it went further.
    const toast = await waitFor(
      () => world.standin.callbackAnswer(stranger.callbackQueryId),
      undefined,
      "the toast",
    );
    expect(String(toast.text)).toContain("not allowed");
    expect(messages()).toHaveLength(before + 3);
    world.standin.userPresses(world.bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: check.message_id,
      data: buttons[0]!.callback_data!,
    });
    await waitFor(() => messages().length >= before + 4, 30_000, "the next question");
    const next = messages().at(-1)!;
    const submit = next.reply_markup!.inline_keyboard.flat().find((b) => b.text.endsWith("Submit"))!;
    world.standin.userPresses(world.bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: next.message_id,
      data: submit.callback_data!,
    });
    await waitFor(
      () => messages().some((m) => m.text?.includes("Agreed to terms: true")),
      30_000,
      "the result",
    );
    expect(messages().find((m) => m.text?.includes("Agreed to terms: true"))!.text).toContain("- Name: Ada");
  });

  it("sends an image as a photo, a blob as a document, resource links as their URIs", async () => {
    let before = messages().length;
    await send("/call get-tiny-image", before + 2);
    const photo = messages()
      .slice(before)
      .find((m) => m.sent?.upload?.method === "photo")!;
    expect(photo.sent!.upload!.name).toBe("get-tiny-image-2.png");
    expect(photo.sent!.upload!.content.subarray(1, 4).toString("latin1")).toBe("PNG");
    before = messages().length;
    await send("/call get-resource-reference resourceType=Blob resourceId=2", before + 2);
    const doc = messages()
      .slice(before)
      .find((m) => m.sent?.upload?.method === "document")!;
    expect(doc.sent!.upload!.size).toBeGreaterThan(0);
    before = messages().length;
    const links = (await send("/call get-resource-links count=2", before + 1)).at(-1)!;
    expect(links.text).toContain("🔗 ");
    expect(links.text).toContain("demo://resource/");
  });

  it("attaches a text output longer than a few messages as a .txt document, its first lines shown", async () => {
    const long = "x".repeat(13_000);
    const before = messages().length;
    await send(`/call echo message=${long}`, before + 2);
    await waitFor(() => messages().some((m) => m.sent?.upload?.name === "echo.txt"), 30_000, "the document");
    const doc = messages().find((m) => m.sent?.upload?.name === "echo.txt")!;
    expect(doc.sent!.upload!.content.toString("utf8")).toBe(`Echo: ${long}`);
    const shown = messages()
      .slice(before)
      .filter((m) => m.text !== undefined);
    expect(shown).toHaveLength(1);
    expect(shown[0]!.text).toContain("the full output (13006 characters, 1 lines) is attached as echo.txt");
  });
});
