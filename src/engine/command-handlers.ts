import type { NamespaceAbout } from "../namespace/call-options.js";
import { scopeRefusalsTotal } from "../ops/metrics.js";
import { newSession } from "../sessions/session.js";
import { coerceKeyValues, describeParameters, IDENTITY_ARGUMENTS } from "./arguments.js";
import { parseCallArguments, type ParsedCommand } from "./command-parser.js";
import { COMMANDS } from "./commands.js";
import { namespaceTexts } from "./namespace-texts.js";
import { texts } from "./texts.js";
import { callChecked, enable, runTool } from "./tool-runner.js";
import { callByAddress, describeByAddress, searchByAddress } from "./discovery.js";
import type { ToolInfo } from "../namespace/tool-info.js";
import { searchTools } from "./tool-search.js";
import type { Turn } from "./turn.js";

type Handler = (turn: Turn, rest: string) => Promise<void>;

const commandLines = () => COMMANDS.filter((c) => c.menu).map((c) => `/${c.command} — ${c.description}`);

const reset: Handler = async (turn) => {
  turn.session = newSession(turn.namespace.name);
  turn.resetHistory = true;
  turn.say(texts.reset(turn.namespace.name));
};

const handlers: Record<string, Handler> = {
  start: async (turn) => {
    const ns = turn.namespace;
    const about = await ns.about();
    turn.say([texts.greeting(ns.name, describeServer(about)), texts.howTo, "", ...commandLines()].join("\n"));
  },

  help: async (turn) => {
    turn.say([texts.helpIntro(turn.namespace.name), texts.howTo, "", ...commandLines()].join("\n"));
  },

  tools: async (turn, rest) => {
    const ns = turn.namespace;
    const tools = await ns.tools();
    const hint = ns.prefixHint();
    if (hint) return turn.say(hint);
    if (rest !== "") {
      if (await searchByAddress(turn, rest, run(turn))) return;
      const matches = searchTools(tools, rest);
      if (matches.length === 0) return turn.say(texts.noMatches(rest));
      enable(
        turn,
        matches.map((t) => t.name),
      );
      turn.say(
        [
          `Tools matching "${rest}" (now enabled):`,
          ...matches.map((t) => toolLine(t.name, t.title, t.description)),
        ].join("\n"),
      );
      return;
    }
    enable(
      turn,
      tools.map((t) => t.name),
    );
    if (tools.some((t) => t.name === ns.toolsTool)) {
      await runTool(turn, ns.toolsTool, {});
      turn.say(`All ${tools.length} tools of "${ns.name}" are now enabled in this conversation.`);
      return;
    }
    turn.say(
      [
        `"${ns.name}" has ${tools.length} tools, now enabled in this conversation:`,
        ...tools.map((t) => toolLine(t.name, t.title, t.description)),
      ].join("\n"),
    );
  },

  describe: async (turn, rest) => {
    if (rest === "") return turn.say(texts.describeUsage);
    const tool = (await turn.namespace.tools()).find((t) => t.name === rest);
    if (!tool && (await describeByAddress(turn, rest, run(turn)))) return;
    if (!tool) return turn.say(texts.unknownTool(rest));
    const params = describeParameters(tool.inputSchema);
    turn.say(
      [
        tool.title ? `${tool.title} (${tool.name})` : tool.name,
        ...(tool.description ? [tool.description] : []),
        params.length > 0 ? "Arguments:" : "No arguments.",
        ...params,
      ].join("\n"),
    );
  },

  call: async (turn, rest) => {
    const parsed = parseCallArguments(rest);
    if (!parsed.ok) return turn.say(parsed.problem);
    const given = Object.keys(parsed.json ?? parsed.pairs ?? {});
    const identity = given.filter((name) => IDENTITY_ARGUMENTS.includes(name));
    if (identity.length > 0) return turn.say(texts.identityArgument(parsed.tool, identity));
    const tool = (await turn.namespace.tools()).find((t) => t.name === parsed.tool);
    // Not a listed tool: an address, when the namespace is found by address.
    if (!tool && (await callByAddress(turn, parsed.tool, parsed.json ?? parsed.pairs ?? {}, run(turn))))
      return;
    if (!tool) {
      scopeRefusalsTotal.inc({ namespace: turn.namespace.name, reason: "not_in_namespace" });
      return turn.say(texts.notInNamespace(parsed.tool, turn.namespace.name));
    }
    let explicit = parsed.json;
    if (!explicit) {
      const coerced = coerceKeyValues(tool.inputSchema, parsed.pairs ?? {});
      if (coerced.bad) return turn.say(texts.invalidArguments(tool.name, coerced.bad));
      explicit = coerced.args;
    }
    await runTool(turn, tool.name, { explicit });
  },

  // A /cancel sent while a call runs is taken by that call (out of band); one that
  // reaches its own turn found nothing running.
  cancel: async (turn) => {
    turn.say(namespaceTexts.nothingToCancel);
  },

  new: reset,
  reset,

  status: async (turn) => {
    const { session, namespace } = turn;
    // Only tools the server has: a server without `ask` or `tools` does not get them listed.
    const existing = new Set((await namespace.tools()).map((t) => t.name));
    const enabled = [...new Set([namespace.askTool, namespace.toolsTool, ...session.enabled])].filter(
      (t): t is string => t !== null && existing.has(t),
    );
    const pending = session.slot
      ? `waiting for ${session.slot.missing[0]!.name} of ${session.slot.tool}`
      : session.offers.some((o) => !o.chosen && o.expiresAt > Date.now())
        ? "options waiting to be chosen"
        : "nothing";
    turn.say(
      [
        `Agent: ${namespace.name}`,
        `Conversation: ${session.conversationId} (since ${new Date(session.createdAt).toISOString()})`,
        `Enabled tools: ${enabled.length > 0 ? enabled.join(", ") : "none"}`,
        `Pending: ${pending}`,
        `Turns so far: ${session.turns}`,
      ].join("\n"),
    );
  },
};

/** Calls a discovery tool through the usual checks (validation, approval, progress, content). */
function run(turn: Turn) {
  return (tool: ToolInfo, args: Record<string, unknown>, question: string) =>
    callChecked(turn, tool, args, question);
}

/** The server's own short description: serverInfo.description, else the first paragraph of its instructions. */
function describeServer(about: NamespaceAbout): string | undefined {
  if (about.description?.trim()) return about.description.trim();
  const first = about.instructions
    ?.trim()
    .split(/\n\s*\n/)[0]
    ?.trim();
  return first || undefined;
}

function toolLine(name: string, title: string | undefined, description: string | undefined): string {
  const head = title ? `${name} — ${title}` : name;
  return description ? `• ${head}: ${description}` : `• ${head}`;
}

/** Runs one chat command; an unknown one gets a clear line and changes nothing. */
export async function handleCommand(turn: Turn, command: ParsedCommand): Promise<void> {
  const handler = handlers[command.name];
  if (!handler) return turn.say(texts.unknownCommand(command.name));
  await handler(turn, command.rest);
}
