import type { NamespaceAbout } from "../namespace/call-options.js";
import { scopeRefusalsTotal } from "../ops/metrics.js";
import { newSession, slotOf } from "../sessions/session.js";
import { coerceKeyValues, describeParameters, IDENTITY_ARGUMENTS } from "./arguments.js";
import { parseCallArguments, type ParsedCommand } from "./command-parser.js";
import { COMMANDS } from "./commands.js";
import { namespaceTexts } from "./namespace-texts.js";
import { texts } from "./texts.js";
import { callChecked, runTool } from "./tool-runner.js";
import { andThen } from "./composer.js";
import { enable, reset as resetTo, say, type Change } from "./changes.js";
import { callByAddress, describeByAddress, searchByAddress } from "./discovery.js";
import type { ToolInfo } from "../namespace/tool-info.js";
import { searchTools } from "./tool-search.js";
import type { TurnContext } from "./turn-context.js";

type Handler = (turn: TurnContext, rest: string) => Promise<Change[]>;

const commandLines = () => COMMANDS.filter((c) => c.menu).map((c) => `/${c.command} — ${c.description}`);

const reset: Handler = async (turn) => [
  resetTo(newSession(turn.namespace.name)),
  say(texts.reset(turn.namespace.name)),
];

const handlers: Record<string, Handler> = {
  start: async (turn) => {
    const ns = turn.namespace;
    const about = await ns.about();
    return [
      say([texts.greeting(ns.name, describeServer(about)), texts.howTo, "", ...commandLines()].join("\n")),
    ];
  },

  help: async (turn) => [
    say([texts.helpIntro(turn.namespace.name), texts.howTo, "", ...commandLines()].join("\n")),
  ],

  tools: async (turn, rest) => {
    const ns = turn.namespace;
    const tools = await ns.tools();
    const hint = ns.prefixHint();
    if (hint) return [say(hint)];
    if (rest !== "") {
      const searched = await searchByAddress(turn, rest, run(turn));
      if (searched) return searched;
      const matches = searchTools(tools, rest);
      if (matches.length === 0) return [say(texts.noMatches(rest))];
      return [
        enable(matches.map((t) => t.name)),
        say(
          [
            `Tools matching "${rest}" (now enabled):`,
            ...matches.map((t) => toolLine(t.name, t.title, t.description)),
          ].join("\n"),
        ),
      ];
    }
    const all = [enable(tools.map((t) => t.name))];
    if (tools.some((t) => t.name === ns.toolsTool)) {
      return andThen(turn, all, async (enabled) => [
        ...(await runTool(enabled, ns.toolsTool, {})),
        say(`All ${tools.length} tools of "${ns.name}" are now enabled in this conversation.`),
      ]);
    }
    return [
      ...all,
      say(
        [
          `"${ns.name}" has ${tools.length} tools, now enabled in this conversation:`,
          ...tools.map((t) => toolLine(t.name, t.title, t.description)),
        ].join("\n"),
      ),
    ];
  },

  describe: async (turn, rest) => {
    if (rest === "") return [say(texts.describeUsage)];
    const tool = (await turn.namespace.tools()).find((t) => t.name === rest);
    if (!tool) return (await describeByAddress(turn, rest, run(turn))) ?? [say(texts.unknownTool(rest))];
    const params = describeParameters(tool.inputSchema);
    return [
      say(
        [
          tool.title ? `${tool.title} (${tool.name})` : tool.name,
          ...(tool.description ? [tool.description] : []),
          params.length > 0 ? "Arguments:" : "No arguments.",
          ...params,
        ].join("\n"),
      ),
    ];
  },

  call: async (turn, rest) => {
    const parsed = parseCallArguments(rest);
    if (!parsed.ok) return [say(parsed.problem)];
    const given = Object.keys(parsed.json ?? parsed.pairs ?? {});
    const identity = given.filter((name) => IDENTITY_ARGUMENTS.includes(name));
    if (identity.length > 0) return [say(texts.identityArgument(parsed.tool, identity))];
    const tool = (await turn.namespace.tools()).find((t) => t.name === parsed.tool);
    if (!tool) {
      // Not a listed tool: an address, when the namespace is found by address.
      const byAddress = await callByAddress(turn, parsed.tool, parsed.json ?? parsed.pairs ?? {}, run(turn));
      if (byAddress) return byAddress;
      scopeRefusalsTotal.inc({ namespace: turn.namespace.name, reason: "not_in_namespace" });
      return [say(texts.notInNamespace(parsed.tool, turn.namespace.name))];
    }
    let explicit = parsed.json;
    if (!explicit) {
      const coerced = coerceKeyValues(tool.inputSchema, parsed.pairs ?? {});
      if (coerced.bad) return [say(texts.invalidArguments(tool.name, coerced.bad))];
      explicit = coerced.args;
    }
    return runTool(turn, tool.name, { explicit });
  },

  // A /cancel sent while a call runs is taken by that call (out of band); one that
  // reaches its own turn found nothing running.
  cancel: async () => [say(namespaceTexts.nothingToCancel)],

  new: reset,
  reset,

  status: async (turn) => {
    const { session, namespace } = turn;
    // Only tools the server has: a server without `ask` or `tools` does not get them listed.
    const existing = new Set((await namespace.tools()).map((t) => t.name));
    const enabled = [...new Set([namespace.askTool, namespace.toolsTool, ...session.enabled])].filter(
      (t): t is string => t !== null && existing.has(t),
    );
    const slot = slotOf(session, turn.event.sender.id);
    const pending = slot
      ? `waiting for ${slot.missing[0]!.name} of ${slot.tool}`
      : session.offers.some((o) => !o.chosen && o.expiresAt > Date.now())
        ? "options waiting to be chosen"
        : "nothing";
    return [
      say(
        [
          `Agent: ${namespace.name}`,
          `Conversation: ${session.conversationId} (since ${new Date(session.createdAt).toISOString()})`,
          `Enabled tools: ${enabled.length > 0 ? enabled.join(", ") : "none"}`,
          `Pending: ${pending}`,
          `Turns so far: ${session.turns}`,
        ].join("\n"),
      ),
    ];
  },
};

/** Calls a discovery tool through the usual checks (validation, approval, progress, content). */
function run(turn: TurnContext) {
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
export async function handleCommand(turn: TurnContext, command: ParsedCommand): Promise<Change[]> {
  const handler = handlers[command.name];
  if (!handler) return [say(texts.unknownCommand(command.name))];
  return handler(turn, command.rest);
}
