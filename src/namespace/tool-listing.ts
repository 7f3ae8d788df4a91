import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { NamespaceConfig } from "../core/config.js";
import { isReadOnly } from "./call-recovery.js";
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
 * out instead of hiding the rest.
 */
export async function fetchToolListing(
  client: Client,
  prefix: string,
  patterns: NamespaceConfig["tools"],
): Promise<FetchedTools> {
  const all: ToolInfo[] = [];
  const invalid: string[] = [];
  const readOnly = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await client.request(
      { method: "tools/list", params: cursor ? { cursor } : {} },
      LenientToolListSchema,
    );
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
