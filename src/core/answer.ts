import { z } from "zod";

/** A reference to one item an Answer points at: an id, and a url when it has one. */
export const RefSchema = z.object({
  id: z.string(),
  url: z.string().nullish(),
});
export type Ref = z.infer<typeof RefSchema>;

/**
 * The structured reply of every `<ns>.ask` router (DESIGN §2): the single source of
 * the Answer type, used to validate namespace results and by the demo server's
 * `outputSchema`.
 */
export const AnswerSchema = z.object({
  ok: z.boolean(),
  answer: z.string(),
  items: z.array(RefSchema),
  caveat: z.string().nullish(),
  options: z.array(z.string()),
});
export type Answer = z.infer<typeof AnswerSchema>;

/** The Answer schema as JSON Schema, for an MCP tool's `outputSchema`. */
export function answerJsonSchema(): { type: "object"; [key: string]: unknown } {
  const schema = z.toJSONSchema(AnswerSchema, { target: "draft-7", io: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  return { ...schema, type: "object" };
}
