import type { Config, NamespaceConfig } from "../../core/config.js";
import { ok, problem, type Diagnosis } from "../../core/diagnosis.js";
import { closest } from "../../core/did-you-mean.js";
import { silentLogger } from "../../core/log.js";
import { printable } from "../../core/printable.js";
import { checkNamespace } from "../../namespace/conformance.js";
import { findProgram } from "../../namespace/find-program.js";
import { NamespaceClient } from "../../namespace/namespace-client.js";

/** One namespace: its program found, the server started and listed, its router graded. */
async function checkOne(name: string, ns: NamespaceConfig, config: Config): Promise<Diagnosis> {
  const subject = `namespace ${name}`;
  if (ns.command && !findProgram(ns.command[0]!, ns.cwd)) {
    return problem(
      `${subject}: the program ${printable(ns.command[0]!)} is not found${ns.command[0]!.includes("/") ? "" : " on PATH"}`,
      `install it, or give its full path in namespaces.${name}.command`,
    );
  }
  const client = new NamespaceClient(name, ns, silentLogger(), config.limits);
  try {
    const report = await checkNamespace(client);
    const failed = [...report.basics, ...report.contract].filter((f) => f.level === "fail");
    const where = ns.url ? `namespaces.${name}.url` : `namespaces.${name}.command`;
    if (report.meets === "none") {
      const first = failed[0];
      return problem(
        `${subject}: ${printable(first?.what ?? "not usable")}${first?.detail ? ` (${printable(first.detail.split("\n")[0]!)})` : ""}`,
        first?.what.startsWith("does not start")
          ? `check ${where}; \`roomgate shell --namespace ${name}\` shows the server's own error`
          : `\`roomgate check -n ${name}\` lists every point`,
      );
    }
    const router = client.askTool;
    const tools = (await client.tools()).map((t) => t.name);
    if (router !== null && client.askConfigured && !tools.includes(router)) {
      const guess = closest(router, tools);
      return problem(
        `${subject}: the router ${printable(router)} is not one of the server's tools${guess ? `; did you mean ${printable(guess)}?` : ""}`,
        `set namespaces.${name}.ask to the router's name${guess ? ` (${printable(guess)})` : ""}, or ask: false for none`,
      );
    }
    if (report.routed && report.meets !== "answer") {
      return problem(
        `${subject}: its router ${printable(router ?? "ask")} breaks the Answer contract (${failed.map((f) => printable(f.what)).join("; ")})`,
        `fix the router (docs/routers.md), or bind the namespace with ask: false; \`roomgate check -n ${name}\` lists every point`,
      );
    }
    const count = tools.length;
    return ok(
      report.routed
        ? `${subject}: started, ${count} tools, its router ${printable(router!)} keeps the Answer contract`
        : `${subject}: started, ${count} tools, no router (used through /tools and /call)`,
    );
  } finally {
    await client.close();
  }
}

/** Every configured namespace, checked in parallel as `roomgate check` would. */
export async function checkNamespaces(config: Config): Promise<Diagnosis[]> {
  return Promise.all(Object.entries(config.namespaces).map(([name, ns]) => checkOne(name, ns, config)));
}
