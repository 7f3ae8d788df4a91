import { NamespaceConfigSchema, type Config, type NamespaceConfig } from "../core/config.js";
import { ConfigError } from "../core/errors.js";
import { silentLogger } from "../core/log.js";
import { printable } from "../core/printable.js";
import { DEFAULT_PROBES, type ConformanceReport, type Finding } from "../namespace/conformance.js";
import { NamespaceBinding } from "../namespace/namespace-binding.js";
import { NamespaceClient } from "../namespace/namespace-client.js";
import { checkRevisions, type RevisionGrade } from "../namespace/revision-check.js";
import { splitCommandLine } from "./command-line.js";

const MARK = { pass: "PASS", fail: "FAIL", warn: "WARN", skip: "SKIP" } as const;

/** What to check: a configured namespace, or a server given directly by command or URL. */
export interface CheckTarget {
  config?: Config;
  namespace?: string;
  command?: string;
  url?: string;
  headers?: string[];
  prefix?: string;
  ask?: string;
  /** Tool name patterns a server checked directly is bound without, as `tools.deny` would. */
  deny?: string[];
}

/** How the check ends: `basics` exits 0 when the server is usable at all; `answer` also needs the Answer contract. */
export type CheckRequirement = "basics" | "answer";

function target(options: CheckTarget): { name: string; config: NamespaceConfig } {
  if (options.command !== undefined || options.url !== undefined) {
    if (options.command !== undefined && options.url !== undefined) {
      throw new ConfigError("give either --command or --url, not both");
    }
    const headers = Object.fromEntries(
      (options.headers ?? []).map((h) => {
        const at = h.indexOf(":");
        if (at < 1) throw new ConfigError(`--header "${h}" should be "Name: value"`);
        return [h.slice(0, at).trim(), h.slice(at + 1).trim()];
      }),
    );
    const parsed = NamespaceConfigSchema.safeParse({
      ...(options.command !== undefined
        ? { command: splitCommandLine(options.command) }
        : { url: options.url }),
      headers,
      // A server named directly is the whole namespace unless told otherwise.
      prefix: options.prefix ?? "",
      ...(options.ask !== undefined ? { ask: options.ask === "false" ? false : options.ask } : {}),
      ...(options.deny ? { tools: { deny: options.deny } } : {}),
    });
    if (!parsed.success)
      throw new ConfigError(`the server to check: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    return { name: options.namespace ?? "server", config: parsed.data };
  }
  if (!options.namespace) throw new ConfigError("name a namespace (-n) or a server (--command / --url)");
  const ns = options.config?.namespaces[options.namespace];
  if (!ns) throw new ConfigError(`namespace "${options.namespace}" is not configured`);
  return { name: options.namespace, config: ns };
}

function print(title: string, findings: Finding[]): void {
  console.log(title);
  for (const f of findings) {
    // Names and details come from the server: shown escaped, so they cannot act on the terminal.
    const detail = f.detail
      ? `\n${printable(f.detail).replace(/\\x0a/g, "\n").replace(/^/gm, "      ")}`
      : "";
    console.log(`${MARK[f.level]}  ${printable(f.what)}${detail}`);
  }
}

function verdict(
  name: string,
  report: ConformanceReport,
  problems: number,
  router: string | null,
  required: CheckRequirement,
): string {
  if (report.meets === "none") return `${name}: not usable (${problems} problem(s))`;
  if (report.meets === "answer") return `${name}: conforms (meets MCP basics and the Answer contract)`;
  if (required === "answer") {
    return problems > 0
      ? `${name}: does not meet the Answer contract that --require answer asks for (${problems} problem(s)); it meets MCP basics only`
      : `${name}: does not meet --require answer: it has no router to keep the Answer contract; it meets MCP basics only`;
  }
  if (report.routed) {
    return (
      `${name}: not usable as bound: its router ${router ?? "ask"} breaks the Answer contract ` +
      `(${problems} problem(s)), so every plain message in its rooms would fail; fix the router, ` +
      "or bind the namespace with `ask: false` to use it through /tools and /call"
    );
  }
  return problems > 0
    ? `${name}: usable through /tools and /call (meets MCP basics); the Answer contract has ${problems} problem(s)`
    : `${name}: usable through /tools and /call (meets MCP basics)`;
}

/** Options of `roomgate check`. */
export type CheckOptions = CheckTarget & { questions: string[]; require?: CheckRequirement };

/**
 * Prints a two-level conformance report for one namespace server, or for every
 * namespace of the configuration when none is named, and resolves to the exit code:
 * 0 when each meets the required level (by default: usable).
 */
export async function runCheck(options: CheckOptions): Promise<number> {
  const direct = options.command !== undefined || options.url !== undefined;
  if (direct || options.namespace !== undefined) return checkOne(options);
  const names = Object.keys(options.config?.namespaces ?? {});
  if (names.length === 0) throw new ConfigError("name a namespace (-n) or a server (--command / --url)");
  let code = 0;
  for (const [i, namespace] of names.entries()) {
    console.log(`${i > 0 ? "\n" : ""}== ${namespace} ==`);
    code = Math.max(code, await checkOne({ ...options, namespace }));
  }
  return code;
}

async function checkOne(options: CheckOptions): Promise<number> {
  const { name, config } = target(options);
  const askTool = new NamespaceBinding(name, config).askTool;
  // A configured namespace is checked under the configured limits (a larger maxTools, say).
  const limits = options.config?.limits;
  const { protocol, grades } = await checkRevisions(
    (revision) => new NamespaceClient(name, config, silentLogger(), limits, revision),
    options.questions.length > 0 ? options.questions : DEFAULT_PROBES,
  );
  const required = options.require ?? "basics";
  if (protocol.length > 0) {
    print("MCP revision", protocol);
    console.log("");
  }
  for (const grade of grades) printGrade(grade);
  const verdicts = grades.map((grade) => {
    const problems = [...grade.report.basics, ...grade.report.contract].filter((f) => f.level === "fail");
    // With two grades each verdict names its revision; one grade's is named above it.
    const on = grades.length > 1 ? ` on ${grade.revision}` : "";
    return `${verdict(name, grade.report, problems.length, askTool, required)}${on}`;
  });
  console.log(verdicts.join("\n"));
  // Rooms use the revision negotiated first: the exit code is its grade.
  const report = grades[0]!.report;
  // A router that breaks the contract fails every plain message of the room: usable it is not.
  const ok =
    report.meets === "answer" || (report.meets === "basics" && required === "basics" && !report.routed);
  return ok ? 0 : 1;
}

/** One revision's two levels, titled with the revision when the server started. */
function printGrade({ revision, report }: RevisionGrade): void {
  const on = revision === undefined ? "" : ` (${revision})`;
  print(`MCP basics${on}`, report.basics);
  if (report.contract.length > 0) {
    console.log("");
    print(`Answer contract${on}`, report.contract);
  }
  console.log("");
}
