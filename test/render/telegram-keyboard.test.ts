import { describe, expect, it } from "vitest";
import { pagedKeyboard, pageData, parsePageData, PAGE_SIZE } from "../../src/render/telegram-keyboard.js";

describe("the paged Telegram keyboard", () => {
  it("shows one page of numbers in short rows, with ◀ page/pages ▶ that rebuild any page from its data", () => {
    const first = pagedKeyboard("offerA", 1000, 0);
    const numbers = first.slice(0, -1).flat();
    expect(numbers.map((b) => b.text)).toEqual(Array.from({ length: PAGE_SIZE }, (_, i) => String(i + 1)));
    expect(numbers[0]!.data).toBe("offerA.1");
    expect(first.every((row) => row.length <= 5)).toBe(true);
    expect(first.at(-1)!.map((b) => b.text)).toEqual(["1/50", "▶"]);
    const next = parsePageData(first.at(-1)![1]!.data)!;
    expect(next).toEqual({ offerId: "offerA", page: 1, total: 1000 });
    const last = pagedKeyboard("offerA", 1000, 49);
    expect(last.slice(0, -1).flat().at(-1)).toEqual({ text: "1000", data: "offerA.1000" });
    expect(last.at(-1)!.map((b) => b.text)).toEqual(["◀", "50/50"]);
    for (const page of [0, 17, 49]) {
      const keyboard = pagedKeyboard("offerA", 1000, page);
      expect(keyboard.flat().length).toBeLessThanOrEqual(100);
      for (const b of keyboard.flat()) expect(Buffer.byteLength(b.data)).toBeLessThanOrEqual(64);
    }
  });

  it("reads back only well-formed page data within the offer's pages", () => {
    expect(parsePageData(pageData({ offerId: "o", page: 2, total: 60 }))).toEqual({
      offerId: "o",
      page: 2,
      total: 60,
    });
    expect(parsePageData(pageData({ offerId: "o", page: 3, total: 60 }))).toBeNull();
    expect(parsePageData("rg:pg:o:1")).toBeNull();
    expect(parsePageData("rg:pg:../x:0:5")).toBeNull();
    expect(parsePageData("offer.1")).toBeNull();
  });
});
