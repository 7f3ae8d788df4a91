import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { EVERYTHING_COMMAND } from "../support/everything.js";
import { heardLine, seenLine, startMediaServer } from "../support/media-server.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot, type StandinUser } from "../support/telegram-api-standin.js";
import { telegramConfig } from "../support/telegram-fixtures.js";
import type { ToolServer } from "../support/tool-server.js";
import { waitFor } from "../support/wait.js";

const ALICE: StandinUser = { id: 9601, first_name: "Alice" };
const FORUM = { id: -1009610, type: "supergroup" as const, title: "Lab", is_forum: true as const };
const FAST = { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } };
const MAX_BYTES = 100_000;

describe("Telegram files, photos and voice notes reach the tools that take them", () => {
  let standin: TelegramApiStandin;
  let db: TestRedis;
  let bot: StandinBot;
  let media: ToolServer;
  let runtime: Runtime;
  beforeAll(async () => {
    standin = await TelegramApiStandin.start();
    db = await testRedis();
    media = await startMediaServer();
    bot = standin.addBot({ username: "files_bot" });
    runtime = await startRuntime({
      config: telegramConfig({
        apiRoot: standin.url,
        limits: { maxFileBytes: MAX_BYTES },
        namespaces: {
          media: { url: media.url },
          stt: { url: media.url, ask: false },
          feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } },
          everything: { command: EVERYTHING_COMMAND, prefix: "", ask: false },
        },
        bots: [
          {
            token: bot.token,
            namespace: "media",
            voice: { tool: "stt.transcribe" },
            users: [ALICE.id],
            groups: [
              {
                chat: FORUM.id,
                users: [ALICE.id],
                respond: "all",
                topics: { "22": "feed", "33": "everything" },
              },
            ],
          },
        ],
      }),
      redisUrl: db.url,
      prefix: db.prefix,
      log: silentLogger(),
      platforms: [createTelegramPlatform({ polling: FAST })],
    });
  });
  afterAll(async () => {
    await runtime.stop();
    await media.close();
    await db.cleanup();
    await standin.close();
  });

  const inDm = () => standin.botMessages(bot.token, ALICE.id);
  const inTopic = (thread: number) => standin.botMessages(bot.token, FORUM.id, thread);
  const fetched = (fileId: unknown) =>
    standin.callsTo("getFile", bot.id).filter((c) => c.params.file_id === fileId);

  async function dm(input: Parameters<TelegramApiStandin["userSends"]>[1]) {
    const before = inDm().length;
    standin.userSends(bot.token, input);
    await waitFor(() => inDm().length > before, 20_000, "the reply");
    return inDm().at(-1)!.text!;
  }

  it("passes a photo and its caption to the router whose schema takes an image, bytes intact", async () => {
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(5000, 9)]);
    const photo = standin.addPhoto({ content: jpeg });
    const reply = await dm({ from: ALICE, photo, caption: "what is in this picture?" });
    expect(reply).toContain(seenLine("image/jpeg", jpeg, "what is in this picture?"));
    const call = media.calls.find((c) => c.name === "media.ask" && typeof c.args.image === "string")!;
    expect(call.args.question).toBe("what is in this picture?");
    expect(call.args.image).toBe(`data:image/jpeg;base64,${jpeg.toString("base64")}`);
    // The largest size within limits.maxFileBytes was fetched, once.
    expect(fetched(photo.at(-1)!.file_id)).toHaveLength(1);
  });

  it("turns a voice note into text with the binding's voice tool, shows it, and asks the router with it", async () => {
    const words = "what should I read today?";
    const voice = standin.addVoice({ content: Buffer.from(words) });
    const before = media.calls.length;
    const reply = await dm({ from: ALICE, voice });
    expect(reply).toContain(`🎤 ${words}`);
    expect(reply).toContain(heardLine(words));
    const calls = media.calls.slice(before);
    expect(calls.map((c) => c.name)).toEqual(["stt.transcribe", "media.ask"]);
    expect(calls[0]!.args.audio).toEqual({
      type: "audio",
      data: Buffer.from(words).toString("base64"),
      mimeType: "audio/ogg",
    });
    expect(calls[1]!.args).toMatchObject({ question: words });
  });

  it("refuses clearly, without fetching, what no tool of the room takes, what is too large or of a type not let in", async () => {
    const before = media.calls.length;
    const photo = standin.addPhoto({ content: Buffer.alloc(3000, 1) });
    standin.userSends(bot.token, { from: ALICE, chat: FORUM, threadId: 22, photo });
    await waitFor(() => inTopic(22).length === 1, 20_000, "the refusal in the feed topic");
    expect(inTopic(22)[0]!.text).toBe(
      "This photo was not passed on: no tool of the feed agent takes files. Send your question as text.",
    );
    expect(fetched(photo.at(-1)!.file_id)).toEqual([]);

    const loud = standin.addVoice({ content: Buffer.alloc(MAX_BYTES + 1, 2) });
    expect(await dm({ from: ALICE, voice: loud })).toContain(`is too large (${MAX_BYTES + 1} bytes)`);
    expect(fetched(loud.file_id)).toEqual([]);

    const zip = standin.addFile({ name: "bundle.zip", mime: "application/zip", content: "PK" });
    expect(await dm({ from: ALICE, document: zip })).toContain(
      'This file "bundle.zip" (application/zip) was not passed on: this bot takes image/*, audio/*, text/*, application/pdf.',
    );
    expect(fetched(zip.file_id)).toEqual([]);

    // The router takes images only: a PDF is not offered to it, and the line says what it takes.
    const pdf = standin.addFile({ name: "paper.pdf", mime: "application/pdf", content: "%PDF-1.4 x" });
    expect(await dm({ from: ALICE, document: pdf, caption: "summarise" })).toBe(
      'This file "paper.pdf" was not passed on: no tool of the media agent takes application/pdf files (media.ask takes images). Send your question as text.',
    );
    expect(fetched(pdf.file_id)).toEqual([]);
    expect(media.calls.slice(before)).toEqual([]);

    // A tool of the agent that would take it, not yet enabled in the room, is named with how to enable it.
    const shot = standin.addPhoto({ content: Buffer.alloc(1500, 4) });
    standin.userSends(bot.token, { from: ALICE, chat: FORUM, threadId: 33, photo: shot });
    await waitFor(() => inTopic(33).length === 1, 20_000, "the line in the everything topic");
    expect(inTopic(33)[0]!.text).toMatch(
      /^This photo was not passed on: no tool enabled in this room takes it\. .*gzip-file-as-resource \(files\).* would: send \/tools to enable it, then send the photo again\.$/,
    );
    expect(fetched(shot.at(-1)!.file_id)).toEqual([]);
  });

  it("gives a photo to server-everything's gzip tool once /tools enabled it, as a data URI it accepts", async () => {
    const earlier = inTopic(33).length;
    standin.userSends(bot.token, { from: ALICE, chat: FORUM, threadId: 33, text: "/tools" });
    await waitFor(() => inTopic(33).length > earlier, 30_000, "the tools list");
    const count = inTopic(33).length;
    const png = Buffer.concat([Buffer.from("\x89PNG\r\n\x1a\n", "binary"), Buffer.alloc(2000, 3)]);
    const photo = standin.addPhoto({ content: png });
    standin.userSends(bot.token, { from: ALICE, chat: FORUM, threadId: 33, photo });
    await waitFor(() => inTopic(33).length > count, 30_000, "the gzip result");
    const replies = inTopic(33).slice(count);
    expect(replies.map((m) => m.text ?? "").join("\n")).not.toContain("not passed on");
    // The tool accepted the data URI and answers with a link to the gzipped photo.
    expect(replies.map((m) => m.text)).toEqual(["🔗 README.md.gz: demo://resource/session/README.md.gz"]);
    expect(fetched(photo.at(-1)!.file_id)).toHaveLength(1);
  });
});
