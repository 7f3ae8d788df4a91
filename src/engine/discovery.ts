import type { CallToolResult } from "@modelcontextprotocol/client";
import { z } from "zod";
import type { ToolInfo } from "../namespace/tool-info.js";
import { scopeRefusalsTotal } from "../ops/metrics.js";
import { namespaceTexts } from "./namespace-texts.js";
import { texts } from "./texts.js";
import { asked } from "./access.js";
import { offer, say, type Change } from "./changes.js";
import { newOffer } from "./offers.js";
import type { TurnContext } from "./turn-context.js";

/** Argument names a discovery tool may use for the address and for the call's own arguments. */
const ADDRESS_NAMES = ["address", "name", "tool", "id", "path"];
const ARGUMENT_NAMES = ["arguments", "args", "params", "input"];
const QUERY_NAMES = ["query", "q", "words", "text", "search"];

/** What a call-by-address tool answers when an address is ambiguous: the candidates it names. */
const AmbiguousSchema = z.object({ candidates: z.array(z.string().min(1)).min(1) });

function propertyOf(tool: ToolInfo, names: string[]): string | undefined {
  const props = tool.inputSchema.properties;
  const keys = props && typeof props === "object" ? Object.keys(props) : [];
  return names.find((n) => keys.includes(n));
}

/** The candidates an ambiguous call-by-address result names, if it is one. */
export function ambiguousCandidates(result: CallToolResult): string[] | undefined {
  const parsed = AmbiguousSchema.safeParse(result.structuredContent);
  return parsed.success ? parsed.data.candidates : undefined;
}

/** Runs a namespace's own discovery tool, by its configured name, through the usual checks. */
type Run = (tool: ToolInfo, args: Record<string, unknown>, question: string) => Promise<Change[]>;

async function discoveryTool(turn: TurnContext, name: string | undefined): Promise<ToolInfo | undefined> {
  if (!name) return undefined;
  return (await turn.namespace.tools()).find((t) => t.name === name);
}

/** `/tools words` through the namespace's own search tool; undefined when it has none. */
export async function searchByAddress(
  turn: TurnContext,
  words: string,
  run: Run,
): Promise<Change[] | undefined> {
  const tool = await discoveryTool(turn, turn.namespace.discovery?.search);
  if (!tool) return undefined;
  return run(tool, { [propertyOf(tool, QUERY_NAMES) ?? "query"]: words }, words);
}

/**
 * An address the binding's `tools.allow` / `tools.deny` rule out does not exist for the
 * room, as a listed tool would not (DESIGN §6): refused here, never sent to the server.
 */
function refusedAddress(turn: TurnContext, address: string): Change[] | undefined {
  if (turn.namespace.permits(address)) return undefined;
  scopeRefusalsTotal.inc({ namespace: turn.namespace.name, reason: "denied_address" });
  return [say(texts.notInNamespace(address, turn.namespace.name))];
}

/** `/describe address` through the namespace's own describe tool; undefined when it has none. */
export async function describeByAddress(
  turn: TurnContext,
  address: string,
  run: Run,
): Promise<Change[] | undefined> {
  const tool = await discoveryTool(turn, turn.namespace.discovery?.describe);
  if (!tool) return undefined;
  const refused = refusedAddress(turn, address);
  if (refused) return refused;
  return run(tool, { [propertyOf(tool, ADDRESS_NAMES) ?? "address"]: address }, address);
}

/** `/call address args` through the namespace's own call-by-address tool; undefined when it has none. */
export async function callByAddress(
  turn: TurnContext,
  address: string,
  args: Record<string, unknown>,
  run: Run,
): Promise<Change[] | undefined> {
  const tool = await discoveryTool(turn, turn.namespace.discovery?.call);
  if (!tool) return undefined;
  const refused = refusedAddress(turn, address);
  if (refused) return refused;
  const call = {
    [propertyOf(tool, ADDRESS_NAMES) ?? "address"]: address,
    [propertyOf(tool, ARGUMENT_NAMES) ?? "arguments"]: args,
  };
  return run(tool, call, address);
}

/**
 * A call the server refused as ambiguous: the candidates it names become options;
 * choosing one calls that address with the same arguments.
 */
export function offerCandidates(
  turn: TurnContext,
  candidates: string[],
  args: Record<string, unknown>,
): Change[] {
  // Candidates the binding rules out are not offered: they do not exist for the room.
  const allowed = candidates.filter((c) => turn.namespace.permits(c));
  if (allowed.length === 0) return [say(namespaceTexts.noAllowedCandidates)];
  return [
    say(namespaceTexts.ambiguous),
    offer(
      newOffer("", allowed, [], turn.settings.choiceSeconds, {
        callWith: args,
        ...asked(turn.event),
      }),
    ),
  ];
}

/** The arguments of a call-by-address request, to offer again with a candidate. */
export function addressArguments(tool: ToolInfo, call: Record<string, unknown>): Record<string, unknown> {
  const value = call[propertyOf(tool, ARGUMENT_NAMES) ?? "arguments"];
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
