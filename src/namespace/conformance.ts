import { AnswerSchema } from "../core/answer.js";
import type { NamespaceClient } from "./namespace-client.js";

/** One finding of a conformance check: what was checked and whether it held. */
export interface Finding {
  level: "pass" | "fail" | "warn";
  what: string;
  detail?: string;
}

/** Questions the check asks the router by default: one clear, one ambiguous, one nonsense. */
export const DEFAULT_PROBES = ["help", "show me everything", "zzzz qqqq"];

/**
 * Checks a namespace server against the Answer contract (DESIGN §2): the router
 * exists and declares an outputSchema, and what it returns validates as an Answer,
 * asking back with options rather than defaulting when it is unsure.
 */
export async function checkNamespace(
  ns: NamespaceClient,
  probes: string[] = DEFAULT_PROBES,
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const tools = await ns.tools();
  findings.push(
    tools.length > 0
      ? { level: "pass", what: `lists ${tools.length} tools with prefix "${ns.prefix}"` }
      : { level: "fail", what: `lists no tools with prefix "${ns.prefix}"` },
  );
  const ask = tools.find((t) => t.name === ns.askTool);
  if (!ask) {
    findings.push({ level: "fail", what: `has no router ${ns.askTool}` });
    return findings;
  }
  findings.push({ level: "pass", what: `has the router ${ns.askTool}` });
  findings.push(
    ask.outputSchema
      ? { level: "pass", what: `${ns.askTool} declares an outputSchema` }
      : { level: "fail", what: `${ns.askTool} declares no outputSchema` },
  );
  findings.push(
    tools.some((t) => t.name === ns.toolsTool)
      ? { level: "pass", what: `has ${ns.toolsTool} for progressive disclosure` }
      : { level: "warn", what: `has no ${ns.toolsTool}; /tools falls back to tools/list` },
  );
  const untitled = tools.filter((t) => !t.title).map((t) => t.name);
  if (untitled.length > 0) {
    findings.push({
      level: "warn",
      what: "tools without a title (option labels show the bare name)",
      detail: untitled.join(", "),
    });
  }
  for (const question of probes) {
    try {
      const result = await ns.call(ns.askTool, { question });
      const parsed = AnswerSchema.safeParse(result.structuredContent);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        findings.push({
          level: "fail",
          what: `"${question}" → not a valid Answer`,
          detail: issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : undefined,
        });
        continue;
      }
      const a = parsed.data;
      findings.push({
        level: "pass",
        what: `"${question}" → ok:${a.ok}, ${a.items.length} items, ${a.options.length} options${a.caveat ? ", a caveat" : ""}`,
      });
      if (a.answer.includes("\n")) {
        findings.push({
          level: "warn",
          what: `"${question}" → the answer line has line breaks; it is shown as is`,
        });
      }
      const unknown = a.options.filter((o) => o.startsWith(ns.prefix) && !tools.some((t) => t.name === o));
      if (unknown.length > 0) {
        findings.push({
          level: "fail",
          what: `"${question}" → options name tools that do not exist`,
          detail: unknown.join(", "),
        });
      }
    } catch (err) {
      findings.push({
        level: "fail",
        what: `"${question}" → the call failed`,
        detail: (err as Error).message,
      });
    }
  }
  return findings;
}
