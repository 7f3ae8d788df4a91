import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  checkConfigText,
  issueLineOf,
  readConfigFile,
  type Config,
  type ConfigIssue,
} from "../core/config.js";
import { note, ok, problem, type Diagnosis } from "../core/diagnosis.js";
import { scrubSecrets } from "../core/log.js";
import { probeMatrix } from "../matrix/matrix-probe.js";
import { probeTelegram } from "../telegram/telegram-probe.js";
import { checkNamespaces } from "./doctor/doctor-namespaces.js";
import { checkPorts } from "./doctor/doctor-ports.js";
import { checkRedis } from "./doctor/doctor-redis.js";

const MARK = { ok: "ok     ", note: "note   ", problem: "PROBLEM" } as const;

/**
 * The environment file holds the tokens: its owner (and the service's group, as the
 * systemd steps set it) may read it, nobody else.
 */
function envFilePrivacy(file: string | undefined): Diagnosis[] {
  if (file === undefined) return [];
  const mode = statSync(file).mode & 0o777;
  return mode & 0o007
    ? [
        problem(
          `${file} can be read by every user (mode ${mode.toString(8)}): it holds the tokens`,
          `chmod 600 ${file}`,
        ),
      ]
    : [ok(`${file}: loaded, not readable by other users`)];
}

/** A missing variable is fixed in the environment file, anything else in the configuration. */
function fixFor(issue: ConfigIssue, file: string, envFile: string | undefined): string {
  const variable = /^environment variable ([A-Za-z_][A-Za-z0-9_]*) is (not set|empty)/.exec(
    issue.message,
  )?.[1];
  if (variable) return `put ${variable}=… in ${envFile ?? join(dirname(file), ".env")}`;
  return `edit ${file}${issue.line ? ` at line ${issue.line}` : ""}`;
}

/** Everything `config check` finds, as diagnoses; the configuration when it is valid. */
function offline(file: string, envFile: string | undefined): { config?: Config; found: Diagnosis[] } {
  const report = checkConfigText(readConfigFile(file));
  const found: Diagnosis[] = [
    ...report.errors.map((i) => problem(`configuration: ${issueLineOf(i)}`, fixFor(i, file, envFile))),
    ...report.warnings.map((i) => note(`configuration: ${issueLineOf(i)}`)),
  ];
  if (report.config) found.unshift(ok(`configuration ${file}: valid`));
  return { config: report.config, found };
}

/** The checks that start a server, open a port or ask a platform, all at once. */
async function online(config: Config): Promise<Diagnosis[]> {
  const groups = await Promise.all([
    checkPorts(config),
    checkRedis(config),
    checkNamespaces(config),
    config.telegram ? probeTelegram(config.telegram) : Promise.resolve([]),
    config.matrix ? probeMatrix(config.matrix) : Promise.resolve([]),
  ]);
  return groups.flat();
}

/**
 * `roomgate doctor` (also `config check --online`): everything `config check` finds,
 * then what only trying finds — the ports free, every namespace's program found,
 * started and its router graded, each Telegram bot's token and webhook, the Matrix
 * token and device, Redis reachable and persisting. One line per finding, with the
 * fix for each problem; exit code 1 on any problem.
 */
export async function runDoctor(options: {
  file: string;
  envFile?: string;
  out?: NodeJS.WritableStream;
}): Promise<number> {
  const out = options.out ?? process.stdout;
  const { config, found } = offline(options.file, options.envFile);
  found.push(...envFilePrivacy(options.envFile));
  if (config) found.push(...(await online(config)));
  for (const d of found) {
    // Masked: a platform's or a server's error may quote a token.
    out.write(scrubSecrets(`${MARK[d.level]}  ${d.text}\n${d.fix ? `         fix: ${d.fix}\n` : ""}`));
  }
  const problems = found.filter((d) => d.level === "problem").length;
  out.write(
    problems === 0
      ? "\nNo problems: roomgate start has what it needs.\n"
      : `\n${problems} problem${problems === 1 ? "" : "s"}${config ? "" : " (the configuration must be valid before the rest can be tried)"}: roomgate start would not work as configured.\n`,
  );
  return problems === 0 ? 0 : 1;
}
