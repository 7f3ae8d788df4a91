import type { Config } from "../core/config.js";
import { ConfigError } from "../core/errors.js";
import { silentLogger } from "../core/log.js";
import { checkNamespace, DEFAULT_PROBES } from "../namespace/conformance.js";
import { NamespaceClient } from "../namespace/namespace-client.js";

const MARK = { pass: "PASS", fail: "FAIL", warn: "WARN" } as const;

/** Prints a conformance report for one namespace; resolves to the exit code (1 when anything failed). */
export async function runCheck(options: {
  config: Config;
  namespace: string;
  questions: string[];
}): Promise<number> {
  const ns = options.config.namespaces[options.namespace];
  if (!ns) throw new ConfigError(`namespace "${options.namespace}" is not configured`);
  const client = new NamespaceClient(options.namespace, ns, silentLogger());
  try {
    const findings = await checkNamespace(
      client,
      options.questions.length > 0 ? options.questions : DEFAULT_PROBES,
    );
    for (const f of findings) {
      console.log(`${MARK[f.level]}  ${f.what}${f.detail ? `\n      ${f.detail}` : ""}`);
    }
    const failed = findings.filter((f) => f.level === "fail").length;
    console.log(
      failed === 0 ? `\n${options.namespace}: conforms` : `\n${options.namespace}: ${failed} problem(s)`,
    );
    return failed === 0 ? 0 : 1;
  } finally {
    await client.close();
  }
}
