// The namespace "h" of a team room, over stdio: a router that answers `pong: <question>`
// (with options for "colour?"), a transfer that needs an account (slot filling), a
// destructive wipe, a payment that asks the room to confirm (elicitation) and a slow job
// (for /cancel and Stop). Every call is appended to TEAM_CALL_LOG as `<tool>\t<json args>`,
// and a call the client cancels (notifications/cancelled) as `cancelled:<tool>\t<json args>`,
// so tests count calls and cancellations at the server.
import { appendFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { answerJsonSchema } from "../../../src/core/answer.js";

const callLog = process.env.TEAM_CALL_LOG;
const server = new Server({ name: "team", version: "1.0.0" }, { capabilities: { tools: {} } });
const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] });
const user = { user: { type: "string" } };

server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    {
      name: "h.ask",
      description: "Answers pong",
      inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
      outputSchema: answerJsonSchema(),
    },
    {
      name: "h.transfer",
      description: "Sends money to an account",
      annotations: { destructiveHint: false },
      inputSchema: {
        type: "object",
        properties: { to: { type: "string", description: "the account to send to" }, ...user },
        required: ["to"],
      },
    },
    {
      name: "h.wipe",
      description: "Wipes an environment",
      annotations: { destructiveHint: true },
      inputSchema: {
        type: "object",
        properties: { target: { type: "string" }, ...user },
        required: ["target"],
      },
    },
    {
      name: "h.pay",
      description: "Pays an amount after the person confirms",
      annotations: { destructiveHint: false },
      inputSchema: {
        type: "object",
        properties: { amount: { type: "number" }, ...user },
        required: ["amount"],
      },
    },
    {
      name: "h.slow",
      description: "Takes a few seconds (4 unless given)",
      annotations: { readOnlyHint: true },
      inputSchema: { type: "object", properties: { seconds: { type: "number" }, ...user } },
    },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  if (callLog) appendFileSync(callLog, `${request.params.name}\t${JSON.stringify(args)}\n`);
  switch (request.params.name) {
    case "h.transfer":
      return text(`SENT to ${String(args.to)} as ${String(args.user)}`);
    case "h.wipe":
      return text(`WIPED ${String(args.target)} as ${String(args.user)}`);
    case "h.pay": {
      const answer = await server.request(
        {
          method: "elicitation/create",
          params: {
            message: `Confirm the payment of ${String(args.amount)} EUR?`,
            requestedSchema: {
              type: "object",
              properties: { confirm: { type: "boolean", title: "Confirm" } },
              required: ["confirm"],
            },
          },
        },
        ElicitResultSchema,
        { signal: extra.signal, timeout: 120_000 },
      );
      const confirmed = answer.action === "accept" && answer.content?.confirm === true;
      return text(
        confirmed ? `PAID ${String(args.amount)} as ${String(args.user)}` : `NOT PAID (${answer.action})`,
      );
    }
    case "h.slow": {
      const halves = Math.round(2 * (typeof args.seconds === "number" ? args.seconds : 4));
      const progressToken = request.params._meta?.progressToken;
      try {
        for (let i = 1; i <= halves; i++) {
          await sleep(500, undefined, { signal: extra.signal });
          if (progressToken !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken, progress: i, total: halves },
            });
          }
        }
      } catch (err) {
        if (extra.signal.aborted && callLog)
          appendFileSync(callLog, `cancelled:h.slow\t${JSON.stringify(args)}\n`);
        throw err;
      }
      return text("SLOW DONE");
    }
    default: {
      // "colour?" is answered with options, to be chosen by the person who asked.
      const asked = String(args.question);
      const answer = {
        ok: true,
        answer: `pong: ${asked}`,
        items: [],
        options: asked === "colour?" ? ["red", "green"] : [],
      };
      return { content: [{ type: "text", text: JSON.stringify(answer) }], structuredContent: answer };
    }
  }
});

await server.connect(new StdioServerTransport());
