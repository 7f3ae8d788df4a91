import { scrubSecrets } from "../core/log.js";
import { checkConfigText, issueLineOf, readConfigFile, type ConfigReport } from "../core/config.js";

/** The report of `roomgate config check` as lines a person reads, errors first. */
export function formatReport(file: string, report: ConfigReport): string[] {
  const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const head =
    report.errors.length === 0
      ? `${file}: valid${report.warnings.length > 0 ? `, ${count(report.warnings.length, "warning")}` : ""}`
      : `${file}: ${count(report.errors.length, "error")}, ${count(report.warnings.length, "warning")}`;
  return [
    head,
    ...report.errors.map((i) => `  error: ${issueLineOf(i)}`),
    ...report.warnings.map((i) => `  warning: ${issueLineOf(i)}`),
  ].map(scrubSecrets);
}

/**
 * `roomgate config check -c file`: validates the file completely (with the
 * environment it would start with) and starts nothing; exit code 1 on any error.
 */
export function runConfigCheck(file: string, env: NodeJS.ProcessEnv = process.env): number {
  const report = checkConfigText(readConfigFile(file), env);
  for (const line of formatReport(file, report)) console.log(line);
  return report.errors.length > 0 ? 1 : 0;
}
