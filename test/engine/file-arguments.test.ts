import { describe, expect, it } from "vitest";
import type { InboundFile } from "../../src/core/event.js";
import { fileArgumentFor, fileArgumentValue, fileKindsOf } from "../../src/engine/file-arguments.js";
import { typeAllowed } from "../../src/engine/file-input.js";

const photo: InboundFile = { name: "photo.jpg", mime: "image/jpeg", size: 3, kind: "photo", ref: "f1" };
const voice: InboundFile = { name: "voice.ogg", mime: "audio/ogg", size: 3, kind: "voice", ref: "f2" };
const pdf: InboundFile = { name: "paper.pdf", mime: "application/pdf", size: 3, kind: "document", ref: "f3" };
const schema = (properties: Record<string, unknown>) => ({ type: "object", properties });

describe("which tool argument takes a file, and how it is written", () => {
  it("reads a file argument from its name, description, format or MCP content shape", () => {
    expect(fileArgumentFor(schema({ image: { type: "string" } }), photo)).toMatchObject({
      name: "image",
      kind: "image",
      encoding: "data-uri",
    });
    expect(fileArgumentFor(schema({ src: { type: "string", format: "uri" } }), pdf)).toMatchObject({
      name: "src",
      kind: "any",
    });
    const content = {
      type: "object",
      properties: { data: { type: "string" }, mimeType: { type: "string" } },
    };
    expect(fileArgumentFor(schema({ recording: content }), voice)).toMatchObject({ encoding: "content" });
    expect(
      fileArgumentFor(
        schema({ upload: { type: "string", contentEncoding: "base64", description: "the file" } }),
        pdf,
      ),
    ).toMatchObject({
      encoding: "base64",
    });
    // Plain text arguments, and arguments about a file (its name), take none.
    expect(
      fileArgumentFor(schema({ question: { type: "string" }, count: { type: "number" } }), photo),
    ).toBeUndefined();
    expect(
      fileArgumentFor(schema({ name: { type: "string", description: "Name of the output file" } }), pdf),
    ).toBeUndefined();
  });

  it("never hands an image argument a voice note, and prefers the surest match", () => {
    expect(fileArgumentFor(schema({ image: { type: "string" } }), voice)).toBeUndefined();
    expect(fileArgumentFor(schema({ audio: { type: "string" } }), photo)).toBeUndefined();
    const gzip = schema({
      name: { type: "string", description: "Name of the output file" },
      data: { type: "string", format: "uri", description: "URL or data URI of the file content to compress" },
    });
    expect(fileArgumentFor(gzip, photo)?.name).toBe("data");
    expect(
      fileArgumentFor(schema({ url: { type: "string", format: "uri" }, picture: { type: "string" } }), photo)
        ?.name,
    ).toBe("picture");
    expect(fileKindsOf(schema({ image: { type: "string" }, audio: { type: "string" } }))).toEqual([
      "image",
      "audio",
    ]);
  });

  it("writes the bytes as a data: URI, as base64, or as MCP content with the fields the schema names", () => {
    const bytes = new Uint8Array([1, 2, 3]);
    expect(
      fileArgumentValue({ name: "image", kind: "image", encoding: "data-uri", score: 3 }, {}, photo, bytes),
    ).toBe("data:image/jpeg;base64,AQID");
    expect(fileArgumentValue({ name: "u", kind: "any", encoding: "base64", score: 2 }, {}, pdf, bytes)).toBe(
      "AQID",
    );
    const s = schema({
      audio: { type: "object", properties: { type: {}, data: {}, mimeType: {}, name: {} } },
    });
    expect(
      fileArgumentValue({ name: "audio", kind: "audio", encoding: "content", score: 5 }, s, voice, bytes),
    ).toEqual({
      type: "audio",
      data: "AQID",
      mimeType: "audio/ogg",
      name: "voice.ogg",
    });
  });

  it("lets through only the configured media types", () => {
    const types = ["image/*", "audio/*", "application/pdf"];
    expect(typeAllowed("image/jpeg", types)).toBe(true);
    expect(typeAllowed("application/PDF", types)).toBe(true);
    expect(typeAllowed("application/zip", types)).toBe(false);
    expect(typeAllowed("text/plain", types)).toBe(false);
  });
});
