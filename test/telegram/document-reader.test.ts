import type { Document } from "grammy/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { DocumentReader } from "../../src/telegram/document-reader.js";
import { createTelegramBot } from "../../src/telegram/telegram-bot.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";

let standin: TelegramApiStandin;
let bot: StandinBot;
let reader: DocumentReader;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot();
  const api = createTelegramBot(bot.token, standin.url).api;
  reader = new DocumentReader(api, `${standin.url}/file/bot${bot.token}`, 100, silentLogger());
});
afterAll(async () => standin.close());

const file = (input: Parameters<TelegramApiStandin["addFile"]>[0]) =>
  standin.addFile(input) as unknown as Document;
const getFiles = () => standin.callsTo("getFile", bot.id).length;

describe("DocumentReader", () => {
  it("downloads Markdown, plain text and CSV, recognised by type or by name", async () => {
    const md = await reader.read(
      file({ name: "draft.md", mime: "application/octet-stream", content: "# Draft\n<b>é</b>" }),
    );
    expect(md).toEqual({
      name: "draft.md",
      mime: "application/octet-stream",
      size: 17,
      text: "# Draft\n<b>é</b>",
    });
    const csv = await reader.read(file({ name: "data", mime: "text/csv", content: "a,b\n1,2" }));
    expect(csv.text).toBe("a,b\n1,2");
  });

  it("downloads no file that is not text (it stays on Telegram for a tool) or is over the size cap", async () => {
    const before = getFiles();
    const doc = file({ name: "paper.pdf", mime: "application/pdf", content: "%PDF" });
    const pdf = await reader.read(doc);
    expect(pdf).toEqual({
      name: "paper.pdf",
      mime: "application/pdf",
      size: 4,
      kind: "document",
      ref: doc.file_id,
    });
    const big = await reader.read(file({ name: "big.txt", mime: "text/plain", content: "x", size: 5000 }));
    expect(big.rejected).toBe(`"big.txt" is too large (5000 bytes); the limit is 100 bytes.`);
    expect(getFiles()).toBe(before);
  });

  it("refuses a text file that turns out larger than announced, or not UTF-8", async () => {
    const sneaky = await reader.read(
      file({ name: "a.txt", mime: "text/plain", content: "y".repeat(150), size: 10 }),
    );
    expect(sneaky.rejected).toMatch(/too large \(150 bytes\)/);
    const latin1 = await reader.read(
      file({ name: "b.txt", mime: "text/plain", content: Buffer.from([0x63, 0x61, 0xe9]) }),
    );
    expect(latin1.rejected).toMatch(/is not UTF-8 text/);
    expect(latin1.text).toBeUndefined();
  });

  it("checks getFile's own file_size before downloading, whatever the message claimed", async () => {
    const stored = file({ name: "claims-small.txt", mime: "text/plain", content: "z", size: 5000 });
    const claimed = { ...stored, file_size: 10 };
    const result = await reader.read(claimed);
    expect(result.rejected).toBe(`"claims-small.txt" is too large (5000 bytes); the limit is 100 bytes.`);
    expect(result.text).toBeUndefined();
  });

  it("turns a failed download into a clear reason instead of an error", async () => {
    const gone = {
      file_id: "missing",
      file_unique_id: "m",
      file_name: "gone.md",
      mime_type: "text/markdown",
      file_size: 3,
    };
    expect((await reader.read(gone)).rejected).toMatch(
      /could not be downloaded from Telegram; please send it again/,
    );
  });
});
