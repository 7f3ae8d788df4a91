import { describe, expect, it } from "vitest";
import {
  coerceArgument,
  describeParameters,
  fillArguments,
  validateArguments,
} from "../../src/engine/arguments.js";

const schema = {
  type: "object",
  properties: {
    query: { type: "string" },
    user_id: { type: "string" },
    conversation_id: { type: "string" },
    history: { type: "array", items: { type: "object" } },
    family: { type: "string", description: "Which sweep" },
    limit: { type: "integer" },
  },
  required: ["query", "family"],
};

describe("argument filling (DESIGN §5)", () => {
  const context = {
    question: "which arm won?",
    userId: "tg:42",
    conversationId: "c-1",
    history: [{ role: "user" as const, text: "hi", at: 1 }],
  };

  it("fills question, user, conversation and history, and asks for the rest", () => {
    const { args, missing } = fillArguments(schema, context);
    expect(args).toEqual({
      query: "which arm won?",
      user_id: "tg:42",
      conversation_id: "c-1",
      history: [{ role: "user", text: "hi" }],
    });
    expect(missing).toEqual([{ name: "family", description: "Which sweep", type: "string" }]);
  });

  it("keeps explicit arguments over filled ones", () => {
    const { args, missing } = fillArguments(schema, context, { query: "explicit", family: "kd" });
    expect(args.query).toBe("explicit");
    expect(missing).toEqual([]);
  });

  it("coerces typed replies and refuses what does not fit", () => {
    expect(coerceArgument("12", "integer")).toEqual({ ok: true, value: 12 });
    expect(coerceArgument("1.5", "integer")).toEqual({ ok: false });
    expect(coerceArgument("yes", "boolean")).toEqual({ ok: true, value: true });
    expect(coerceArgument("[1,2]", "array")).toEqual({ ok: true, value: [1, 2] });
    expect(coerceArgument("  spaced  ", "string")).toEqual({ ok: true, value: "  spaced  " });
  });

  it("validates against the schema before a call", () => {
    expect(validateArguments(schema, { query: "q", family: "f" })).toBeUndefined();
    expect(validateArguments(schema, { query: "q", family: "f", limit: "ten" })).toMatch(
      /limit must be integer/,
    );
    expect(validateArguments(schema, { query: "q" })).toMatch(/family/);
  });
});

describe("/describe of a schema (DESIGN §5)", () => {
  it("shows enums, defaults, ranges, array item types and nested objects", () => {
    const lines = describeParameters({
      type: "object",
      required: ["mode", "filter"],
      properties: {
        mode: { type: "string", enum: ["fast", "slow"], description: "How hard to try" },
        count: { type: "number", default: 3, minimum: 1, maximum: 10 },
        tags: { type: "array", items: { type: "string" } },
        filter: {
          type: "object",
          required: ["field"],
          properties: { field: { type: "string" }, op: { type: "string", enum: ["eq", "ne"] } },
        },
        rows: { type: "array", items: { type: "object", properties: { id: { type: "integer" } } } },
      },
    });
    expect(lines).toEqual([
      '• mode (string, required, one of "fast", "slow"): How hard to try',
      "• count (number, optional, default 3, 1–10)",
      "• tags (array of string, optional)",
      "• filter (object, required)",
      "    • field (string, required)",
      '    • op (string, optional, one of "eq", "ne")',
      "• rows (array of object, optional)",
      "    • id (integer, optional)",
    ]);
  });

  it("a validation error names the field and lists the allowed values", () => {
    const schema = {
      type: "object",
      properties: { filter: { type: "object", properties: { op: { enum: ["eq", "ne"] } } } },
    };
    expect(validateArguments(schema, { filter: { op: "gt" } })).toBe('filter.op must be one of "eq", "ne"');
  });
});
