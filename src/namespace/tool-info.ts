import { z } from "zod";

/** What roomgate keeps of one MCP tool from `tools/list`, parsed where it enters. */
export const ToolInfoSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()).default({ type: "object" }),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  /** MCP behaviour hints; absent hints take the spec's defaults (see `isDestructive`). */
  annotations: z
    .looseObject({
      title: z.string().optional(),
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    })
    .optional()
    .catch(undefined),
  /** Whether the tool runs as an MCP task (`required` means it cannot be called without one). */
  execution: z
    .looseObject({ taskSupport: z.enum(["forbidden", "optional", "required"]).optional() })
    .optional()
    .catch(undefined),
});
export type ToolInfo = z.infer<typeof ToolInfoSchema>;

/** Reads a tool's title the way MCP allows it: `title`, or `annotations.title`. */
export function parseToolInfo(raw: unknown): ToolInfo | undefined {
  const parsed = ToolInfoSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const title = parsed.data.title ?? parsed.data.annotations?.title;
  return { ...parsed.data, title };
}

/**
 * Whether MCP marks the tool destructive: `destructiveHint`, which the spec
 * defaults to true for a tool that is not `readOnlyHint`.
 */
export function isDestructive(tool: ToolInfo): boolean {
  const a = tool.annotations;
  if (a?.readOnlyHint === true) return false;
  return a?.destructiveHint ?? true;
}

/** A `tools/list` page read leniently: each tool is parsed on its own by `parseToolInfo`. */
export const LenientToolListSchema = z.object({
  tools: z.array(z.unknown()),
  nextCursor: z.string().optional(),
});

/** What the server listed, before the namespace's prefix and the binding's patterns. */
export interface ToolListing {
  all: number;
  prefixed: number;
  /** Names outside the prefix (a few, for reports). */
  foreign: string[];
  /** Tools left out because their description is broken, each with the reason. */
  invalid: string[];
}

/** Why a tool cannot be offered (MCP requires an object input schema), or undefined. */
export function schemaProblem(tool: ToolInfo): string | undefined {
  return tool.inputSchema.type === "object" ? undefined : 'inputSchema.type is not "object"';
}

/** A listed tool's name for a report, even when the rest of it is broken. */
export function toolName(raw: unknown): string {
  const name = (raw as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : "(a tool without a name)";
}
