import { createHash } from "node:crypto";
import { startToolServer, type ToolServer } from "./tool-server.js";

const READ_ONLY = { readOnlyHint: true } as const;

/** What `media.ask` says about an image it was given: its type, size and a digest of its bytes. */
export function seenLine(mime: string, bytes: Buffer, question: string): string {
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  return `Seen ${mime}, ${bytes.length} bytes, sha256 ${digest}: ${question}`;
}

/** The Answer `media.ask` gives without an image: the question as it arrived. */
export function heardLine(question: string): string {
  return `Asked: ${question}`;
}

function answer(line: string) {
  const structured = { ok: true, answer: line, items: [], caveat: null, options: [] };
  return {
    content: [{ type: "text" as const, text: JSON.stringify(structured) }],
    structuredContent: structured,
  };
}

/**
 * A test MCP server over Streamable HTTP with tools that take files: a router
 * (`media.ask`) whose `image` argument is a data: URI, and a speech-to-text tool
 * (`stt.transcribe`) that takes MCP audio content and, being a test, reads the
 * "recording" as UTF-8 text, so a voice note's words are known in advance.
 */
export function startMediaServer(): Promise<ToolServer> {
  return startToolServer([
    {
      tool: {
        name: "media.ask",
        description: "Answers a question, looking at a photo when one is given",
        annotations: READ_ONLY,
        inputSchema: {
          type: "object",
          properties: {
            question: { type: "string" },
            image: { type: "string", description: "A photo to look at, as a data: URI" },
          },
          required: ["question"],
        },
        outputSchema: { type: "object" },
      },
      run: (args) => {
        const question = String(args.question ?? "");
        const image = typeof args.image === "string" ? /^data:([^;]+);base64,(.*)$/s.exec(args.image) : null;
        if (!image) return answer(heardLine(question));
        return answer(seenLine(image[1]!, Buffer.from(image[2]!, "base64"), question));
      },
    },
    {
      tool: {
        name: "stt.transcribe",
        description: "Turns a recording into text",
        annotations: READ_ONLY,
        inputSchema: {
          type: "object",
          properties: {
            audio: {
              type: "object",
              description: "The recording, as MCP audio content",
              properties: {
                type: { type: "string" },
                data: { type: "string" },
                mimeType: { type: "string" },
              },
              required: ["data", "mimeType"],
            },
          },
          required: ["audio"],
        },
      },
      run: (args) => {
        const audio = args.audio as { data?: string; mimeType?: string; type?: string };
        const text = Buffer.from(audio.data ?? "", "base64").toString("utf8");
        return { content: [{ type: "text", text }], structuredContent: { text } };
      },
    },
  ]);
}
