import { checkNamespace, type ConformanceReport, type Finding } from "./conformance.js";
import { LEGACY_REVISION, MODERN_REVISION, TASKS_EXTENSION, type RevisionChoice } from "./mcp-client.js";
import type { NamespaceClient } from "./namespace-client.js";

/** The grade of a server on one MCP revision. */
export interface RevisionGrade {
  /** The revision graded; undefined when the server did not start at all. */
  revision: string | undefined;
  report: ConformanceReport;
}

/** What `roomgate check` found out about revisions, and a grade for each one the server speaks. */
export interface RevisionReport {
  /** Which revision roomgate negotiates with the server, and whether it also serves the other. */
  protocol: Finding[];
  /** The revision roomgate uses first (the newest both speak), then the other one when the server speaks it. */
  grades: RevisionGrade[];
}

/** Checks one client, closing it after; with the extensions its server offers. */
async function graded(
  client: NamespaceClient,
  probes: string[],
): Promise<{ grade: RevisionGrade; extensions: string[] }> {
  try {
    const report = await checkNamespace(client, probes);
    const revision = client.revision;
    const about = revision === undefined ? undefined : await client.about().catch(() => undefined);
    return { grade: { revision, report }, extensions: about?.extensions ?? [] };
  } finally {
    await client.close();
  }
}

/**
 * Grades a server on each MCP revision it speaks: first on the one roomgate negotiates
 * (the newest both sides speak, which is what every room uses), then, when that is
 * 2026-07-28, again as a 2025-11-25 client would see it. `open` makes a client held
 * to a choice of revision.
 */
export async function checkRevisions(
  open: (choice: RevisionChoice) => NamespaceClient,
  probes: string[],
): Promise<RevisionReport> {
  const { grade: first, extensions } = await graded(open("newest"), probes);
  if (first.revision === undefined) return { protocol: [], grades: [first] };
  const protocol: Finding[] = [];
  if (first.revision !== MODERN_REVISION) {
    protocol.push({ level: "pass", what: `speaks ${first.revision}; roomgate uses it` });
    protocol.push({
      level: "skip",
      what: `${MODERN_REVISION}: not offered (the server answered the server/discover probe as a ${LEGACY_REVISION} server)`,
    });
    return { protocol, grades: [first] };
  }
  protocol.push({ level: "pass", what: `speaks ${MODERN_REVISION}, the newest revision; roomgate uses it` });
  protocol.push(
    extensions.includes(TASKS_EXTENSION)
      ? { level: "pass", what: `offers the Tasks extension (${TASKS_EXTENSION})` }
      : { level: "skip", what: "offers no Tasks extension: every tool runs inside its call" },
  );
  const { grade: older } = await graded(open(LEGACY_REVISION), probes);
  if (older.revision === undefined) {
    const why = older.report.basics[0]?.what.replace(/^does not start: /, "") ?? "it did not start";
    protocol.push({
      level: "warn",
      what: `does not serve ${LEGACY_REVISION} clients (${why}); roomgate does not need it, older clients do`,
    });
    return { protocol, grades: [first] };
  }
  protocol.push({ level: "pass", what: `also serves ${LEGACY_REVISION} clients` });
  return { protocol, grades: [first, older] };
}
