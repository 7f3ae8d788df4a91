import { SchemaDialects } from "../core/schema-dialects.js";
import { AnswerSchema, type Answer } from "../core/answer.js";
import { MODERN_REVISION } from "./mcp-client.js";
import type { NamespaceClient } from "./namespace-client.js";
import { NamespaceUnreachableError } from "./namespace-errors.js";
import { sampleArguments } from "./sample-arguments.js";
import type { ToolInfo } from "./tool-info.js";

/** One finding of a conformance check: what was checked and whether it held. */
export interface Finding {
  level: "pass" | "fail" | "warn" | "skip";
  what: string;
  detail?: string;
}

/** The two levels `roomgate check` reports: plain MCP, then the Answer contract (DESIGN §2). */
export interface ConformanceReport {
  basics: Finding[];
  contract: Finding[];
  /** The highest level met: none (unusable), MCP basics (usable through /tools and /call), or the Answer contract. */
  meets: "none" | "basics" | "answer";
  /**
   * True when the namespace has a router as bound (configured with `ask:`, or found as
   * `<prefix>ask`): every plain message goes to it, so the contract is required.
   */
  routed: boolean;
}

/** Questions the check asks the router by default: one clear, one ambiguous, one nonsense. */
export const DEFAULT_PROBES = ["help", "show me everything", "zzzz qqqq"];

const failed = (findings: Finding[]) => findings.some((f) => f.level === "fail");

/**
 * Checks a namespace server in two levels, point by point: MCP basics (connects,
 * lists tools, valid schemas, one read-only call) and, when it has a router, the
 * Answer contract (outputSchema, valid answers including ok:false, restriction,
 * determinism). A server that cannot start is a finding with its cause, not a throw.
 */
export async function checkNamespace(
  ns: NamespaceClient,
  probes: string[] = DEFAULT_PROBES,
): Promise<ConformanceReport> {
  const basics: Finding[] = [];
  let tools: ToolInfo[];
  try {
    tools = await ns.tools();
    // 2026-07-28 has no initialize handshake: the client learns the server from server/discover.
    const modern = (await ns.about()).revision === MODERN_REVISION;
    basics.push({
      level: "pass",
      what: modern ? "connects and discovers it (server/discover)" : "connects and initializes",
    });
  } catch (err) {
    const reason = err instanceof NamespaceUnreachableError ? err.reason : "it failed at start";
    basics.push({
      level: "fail",
      what: `does not start: ${reason}`,
      detail:
        (err as Error).cause instanceof Error ? (err as Error).cause!.toString() : (err as Error).message,
    });
    return { basics, contract: [], meets: "none", routed: ns.askConfigured };
  }
  basics.push(listing(ns, tools));
  basics.push(schemas(tools, ns.listing.invalid));
  basics.push(await readOnlyCall(ns, tools));
  const routed = ns.askConfigured || (ns.askTool !== null && tools.some((t) => t.name === ns.askTool));
  if (failed(basics)) return { basics, contract: [], meets: "none", routed };
  const contract = await answerContract(ns, tools, probes);
  const answers = contract.some((f) => f.level === "pass");
  return { basics, contract, meets: answers && !failed(contract) ? "answer" : "basics", routed };
}

function listing(ns: NamespaceClient, tools: ToolInfo[]): Finding {
  const hint = ns.prefixHint();
  if (hint) return { level: "fail", what: `lists no tools under the prefix "${ns.prefix}"`, detail: hint };
  if (tools.length === 0 && ns.listing.invalid.length === 0) return { level: "fail", what: "lists no tools" };
  const under = ns.prefix === "" ? "" : ` under the prefix "${ns.prefix}"`;
  return { level: "pass", what: `lists ${tools.length} tools${under}` };
}

const ajv = new SchemaDialects({ strict: false, allErrors: true, validateSchema: true, logger: false });

function schemas(tools: ToolInfo[], invalid: string[]): Finding {
  const bad = [...invalid];
  for (const tool of tools) {
    try {
      ajv.compile(tool.inputSchema);
    } catch (err) {
      bad.push(`${tool.name}: ${(err as Error).message}`);
    }
  }
  return bad.length === 0
    ? { level: "pass", what: "every input schema is a valid JSON Schema object" }
    : { level: "fail", what: `${bad.length} tool(s) have an invalid input schema`, detail: bad.join("\n") };
}

/**
 * Tools the check never calls on its own, read-only or not: what they return (the
 * server's environment, a secret) is not for a conformance report's output.
 */
const REVEALING = /env|secret|token|passw|credential|key/i;

async function readOnlyCall(ns: NamespaceClient, tools: ToolInfo[]): Promise<Finding> {
  const candidates = tools
    .filter((t) => t.annotations?.readOnlyHint === true && t.execution?.taskSupport !== "required")
    .filter((t) => !REVEALING.test(t.name))
    .map((t) => ({ tool: t, args: sampleArguments(t.inputSchema) }))
    .filter((c): c is { tool: ToolInfo; args: Record<string, unknown> } => c.args !== undefined)
    .sort((a, b) => Object.keys(a.args).length - Object.keys(b.args).length);
  const pick = candidates[0];
  if (!pick) {
    return {
      level: "warn",
      what: "no tool is marked readOnlyHint with arguments the check can fill; none was called",
    };
  }
  try {
    const result = await ns.call(pick.tool.name, pick.args);
    return result.isError
      ? {
          level: "warn",
          what: `the read-only tool ${pick.tool.name} answered with isError`,
          detail: JSON.stringify(pick.args),
        }
      : {
          level: "pass",
          what: `calls the read-only tool ${pick.tool.name}`,
          detail: JSON.stringify(pick.args),
        };
  } catch (err) {
    return {
      level: "fail",
      what: `calling the read-only tool ${pick.tool.name} failed`,
      detail: (err as Error).message,
    };
  }
}

async function answerContract(ns: NamespaceClient, tools: ToolInfo[], probes: string[]): Promise<Finding[]> {
  const router = ns.askTool;
  const ask = router === null ? undefined : tools.find((t) => t.name === router);
  if (!ask && router !== null && ns.askConfigured) {
    return [
      {
        level: "fail",
        what: `the binding names the router ${router}, which the server does not list`,
        detail: "every plain message in a room of this namespace would find no router",
      },
    ];
  }
  if (!ask) {
    const why =
      router === null ? "the binding says it has no router (ask: false)" : `it lists no router ${router}`;
    return [
      {
        level: "skip",
        what: `the Answer contract does not apply: ${why}; the namespace is used through /tools and /call`,
      },
    ];
  }
  const findings: Finding[] = [{ level: "pass", what: `has the router ${ask.name}` }];
  findings.push(
    ask.outputSchema
      ? { level: "pass", what: `${ask.name} declares an outputSchema` }
      : { level: "fail", what: `${ask.name} declares no outputSchema` },
  );
  const answers: Answer[] = [];
  for (const question of probes) {
    const probe = await askRouter(ns, ask.name, question, tools);
    findings.push(...probe.findings);
    if (probe.answer) answers.push(probe.answer);
  }
  if (answers.length > 0) {
    findings.push(
      answers.some((a) => !a.ok)
        ? { level: "pass", what: "answers a question it cannot answer with ok:false" }
        : {
            level: "fail",
            what: "no probe got an ok:false Answer; a router must ask back or fail, never default",
            detail: probes.join(" | "),
          },
    );
  }
  findings.push(restriction(ns));
  findings.push(await determinism(ns, ask.name, probes[0] ?? DEFAULT_PROBES[0]!));
  return findings;
}

async function askRouter(
  ns: NamespaceClient,
  router: string,
  question: string,
  tools: ToolInfo[],
): Promise<{ findings: Finding[]; answer?: Answer }> {
  try {
    const result = await ns.call(router, { question });
    if (result.isError === true) {
      const text = result.content
        .flatMap((c) => (c.type === "text" ? [c.text] : []))
        .join(" ")
        .trim();
      return {
        findings: [
          {
            level: "fail",
            what: `"${question}" → the router answered with an error (isError), not an Answer with ok:false`,
            detail: text === "" ? undefined : text.slice(0, 300),
          },
        ],
      };
    }
    const parsed = AnswerSchema.safeParse(result.structuredContent);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        findings: [
          {
            level: "fail",
            what: `"${question}" → not a valid Answer`,
            detail: issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : undefined,
          },
        ],
      };
    }
    const a = parsed.data;
    const findings: Finding[] = [
      {
        level: "pass",
        what: `"${question}" → ok:${a.ok}, ${a.items.length} items, ${a.options.length} options${a.caveat ? ", a caveat" : ""}`,
      },
    ];
    const unknown = a.options.filter(
      (o) => o.startsWith(ns.prefix) && ns.prefix !== "" && !tools.some((t) => t.name === o),
    );
    if (unknown.length > 0) {
      findings.push({
        level: "fail",
        what: `"${question}" → options name tools that do not exist`,
        detail: unknown.join(", "),
      });
    }
    return { findings, answer: a };
  } catch (err) {
    return {
      findings: [{ level: "fail", what: `"${question}" → the call failed`, detail: (err as Error).message }],
    };
  }
}

function restriction(ns: NamespaceClient): Finding {
  if (ns.prefix === "") {
    return {
      level: "skip",
      what: 'restriction: the namespace is the whole server (prefix ""), nothing else to hide',
    };
  }
  const { foreign } = ns.listing;
  return foreign.length === 0
    ? { level: "pass", what: `restricted: the server lists only "${ns.prefix}" tools` }
    : {
        level: "fail",
        what: `not restricted: the server also lists tools of other namespaces (start it restricted, e.g. with an env var)`,
        detail: foreign.join(", "),
      };
}

async function determinism(ns: NamespaceClient, router: string, question: string): Promise<Finding> {
  try {
    const [first, second] = [await ns.call(router, { question }), await ns.call(router, { question })];
    const same = JSON.stringify(first.structuredContent) === JSON.stringify(second.structuredContent);
    return same
      ? { level: "pass", what: `"${question}" twice → the same Answer` }
      : { level: "fail", what: `"${question}" twice → different Answers; a router must be deterministic` };
  } catch (err) {
    return { level: "fail", what: `asking "${question}" twice failed`, detail: (err as Error).message };
  }
}
