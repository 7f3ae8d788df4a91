import type { Client } from "@modelcontextprotocol/client";
import type { NamespaceConfig } from "../core/config.js";
import { isReadOnly } from "./call-recovery.js";
import { listingTooLarge, type NamespaceLimits } from "./namespace-limits.js";
import { formatBytes } from "./reply-cap.js";
import { filterTools } from "./tool-filter.js";
import {
  LenientToolListSchema,
  parseToolInfo,
  schemaProblem,
  toolName,
  type ToolInfo,
  type ToolListing,
} from "./tool-info.js";

/** One namespace's tools as the room sees them, what the server listed, and which tools are read-only. */
export interface FetchedTools {
  tools: ToolInfo[];
  listed: ToolListing;
  readOnly: Set<string>;
}

/**
 * Reads every page of `tools/list` and keeps the namespace's own tools (prefix, then the
 * binding's allow/deny patterns). Each tool is parsed on its own (not the SDK's
 * all-or-nothing list schema), so one tool with a broken schema is reported and left
 * out instead of hiding the rest. The server decides how many pages, tools and bytes
 * it sends, so each is capped (`limits.maxToolListPages`, `maxTools`, `maxToolListBytes`):
 * a listing past a cap fails whole with a NamespaceLimitError.
 */
export async function fetchToolListing(
  client: Client,
  binding: { name: string; prefix: string; patterns: NamespaceConfig["tools"] },
  limits: NamespaceLimits,
): Promise<FetchedTools> {
  const { name, prefix, patterns } = binding;
  const all: ToolInfo[] = [];
  const invalid: string[] = [];
  const readOnly = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  let listed = 0;
  let bytes = 0;
  do {
    if (pages === limits.maxToolListPages) {
      throw listingTooLarge(
        name,
        "tool_list_pages",
        `it listed more than ${limits.maxToolListPages} pages, over limits.maxToolListPages`,
      );
    }
    pages += 1;
    const page = await client.request(
      { method: "tools/list", params: cursor ? { cursor } : {} },
      LenientToolListSchema,
    );
    listed += page.tools.length;
    if (listed > limits.maxTools) {
      throw listingTooLarge(
        name,
        "tools",
        `it listed more than ${limits.maxTools} tools, over limits.maxTools`,
      );
    }
    for (const raw of page.tools) bytes += Buffer.byteLength(JSON.stringify(raw) ?? "");
    if (bytes > limits.maxToolListBytes) {
      throw listingTooLarge(
        name,
        "tool_list_bytes",
        `it listed more than ${formatBytes(limits.maxToolListBytes)} of tool descriptions, over limits.maxToolListBytes`,
      );
    }
    for (const raw of page.tools) {
      const tool = parseToolInfo(raw);
      const problem = tool ? schemaProblem(tool) : "not a valid tool description";
      if (tool && !problem) all.push(tool);
      else invalid.push(`${toolName(raw)}: ${problem}`);
      if (tool && isReadOnly(raw)) readOnly.add(tool.name);
    }
    cursor = page.nextCursor;
  } while (cursor);
  const kept = filterTools(all, prefix, patterns);
  return {
    tools: kept.tools,
    listed: { all: kept.listed, prefixed: kept.prefixed, foreign: kept.foreign, invalid },
    readOnly,
  };
}
