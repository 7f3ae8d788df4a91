import { enable, say } from "../changes.js";
import { andThen } from "../composer.js";
import { searchByAddress } from "../discovery.js";
import { texts } from "../texts.js";
import { checkedCall, runTool } from "../tool-runner.js";
import { searchTools } from "../tool-search.js";
import { restOfLine, type Command } from "./command.js";

/**
 * `/tools` shows the namespace's tools (through its own `tools` tool when it has one)
 * and enables them; `/tools words…` searches them and enables the matches (DESIGN §6).
 * Tools past the router: the binding's callers only.
 */
export const tools: Command<string> = {
  name: "tools",
  description: "Show and enable this agent's tools; /tools words… searches them",
  menu: true,
  who: "caller",
  parse: restOfLine,
  async run(turn, words) {
    const ns = turn.namespace;
    const all = await ns.tools();
    const hint = ns.prefixHint();
    if (hint) return [say(hint)];
    if (words !== "") {
      const searched = await searchByAddress(turn, words, checkedCall(turn));
      if (searched) return searched;
      const matches = searchTools(all, words);
      if (matches.length === 0) return [say(texts.noMatches(words))];
      return [
        enable(matches.map((t) => t.name)),
        say(
          [
            `Tools matching "${words}" (now enabled):`,
            ...matches.map((t) => toolLine(t.name, t.title, t.description)),
          ].join("\n"),
        ),
      ];
    }
    const enabled = [enable(all.map((t) => t.name))];
    if (all.some((t) => t.name === ns.toolsTool)) {
      return andThen(turn, enabled, async (next) => [
        ...(await runTool(next, ns.toolsTool, {})),
        // Counted as the list above counts them, then what it leaves out (the router, the lister).
        say(
          enabledLine(
            ns.name,
            all.map((t) => t.name),
            [ns.askTool, ns.toolsTool],
          ),
        ),
      ]);
    }
    return [
      ...enabled,
      say(
        [
          `"${ns.name}" has ${all.length} tools, now enabled in this conversation:`,
          ...all.map((t) => toolLine(t.name, t.title, t.description)),
        ].join("\n"),
      ),
    ];
  },
};

function toolLine(name: string, title: string | undefined, description: string | undefined): string {
  const head = title ? `${name} — ${title}` : name;
  return description ? `• ${head}: ${description}` : `• ${head}`;
}

/**
 * The line after a namespace's own tool list: everything is enabled now. Its list
 * usually leaves out the router and the lister itself, so the count here says so
 * rather than naming a number the list above does not show.
 */
function enabledLine(ns: string, names: string[], own: (string | null)[]): string {
  const extra = own.filter((t): t is string => t !== null && names.includes(t));
  const rest = names.length - extra.length;
  const plus = extra.length > 0 ? `, plus ${extra.join(" and ")}` : "";
  return `Now enabled in this conversation: the ${rest} tools of "${ns}"${plus}.`;
}
