import { z } from "zod";

/** What roomgate keeps of one MCP tool from `tools/list`, parsed where it enters. */
export const ToolInfoSchema = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()).default({ type: "object" }),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
});
export type ToolInfo = z.infer<typeof ToolInfoSchema>;

/** Reads a tool's title the way MCP allows it: `title`, or `annotations.title`. */
export function parseToolInfo(raw: unknown): ToolInfo | undefined {
  const parsed = ToolInfoSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const annotations = (raw as { annotations?: { title?: unknown } }).annotations;
  const title = parsed.data.title ?? (typeof annotations?.title === "string" ? annotations.title : undefined);
  return { ...parsed.data, title };
}
