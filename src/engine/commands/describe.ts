import { describeParameters } from "../arguments.js";
import { say } from "../changes.js";
import { describeByAddress } from "../discovery.js";
import { texts } from "../texts.js";
import { checkedCall } from "../tool-runner.js";
import { restOfLine, type Command } from "./command.js";

/** `/describe <tool>`: one tool's title, description and arguments. */
export const describe: Command<string> = {
  name: "describe",
  description: "Show one tool's description and arguments",
  menu: true,
  who: "user",
  parse: restOfLine,
  async run(turn, name) {
    if (name === "") return [say(texts.describeUsage)];
    const tool = (await turn.namespace.tools()).find((t) => t.name === name);
    if (!tool) {
      const byAddress = await describeByAddress(turn, name, checkedCall(turn));
      return byAddress ?? [say(texts.unknownTool(name))];
    }
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
};
