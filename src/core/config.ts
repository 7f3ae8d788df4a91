import { readFileSync } from "node:fs";
import { z } from "zod";
import { LineCounter, parseDocument } from "yaml";
import { checkAcrossFields } from "./config-checks.js";
import { checkProactive } from "./config-proactive-checks.js";
import { expandEnv, type EnvUse } from "./config-env.js";
import { secretStrengthIssues, secretsOf } from "./config-secrets.js";
import { registerSecret } from "./log.js";
import { fromZodIssues, issueLine, type ConfigIssue } from "./config-issues.js";
import { fieldIssues, routerHints } from "./config-hints.js";
import { placeIssues } from "./config-lines.js";
import { ConfigError } from "./errors.js";
import { AuditSchema } from "./config/audit.js";
import { EditsSchema } from "./config/edits.js";
import { LimitsSchema } from "./config/limits.js";
import { MatrixSchema } from "./config/matrix.js";
import { NamespacesSchema } from "./config/namespaces.js";
import { HookConfigSchema, ProactiveSettingsSchema, ScheduleConfigSchema } from "./config/proactive.js";
import { HttpSchema, ShutdownSchema, WorkerSchema } from "./config/process.js";
import { QueueSchema } from "./config/queue.js";
import { RedisSchema } from "./config/redis.js";
import { SessionsSchema } from "./config/sessions.js";
import { ShellSchema } from "./config/shell.js";
import { TelegramSchema } from "./config/telegram.js";

// Every section is a strict object in its own file under ./config/: an unknown key is
// an error with a "did you mean" (config-issues.ts finds the known keys by walking these
// schemas). To add a key, add it to its section's schema with a default; sections
// default through `prefault({})`, so a default is written once, beside its key.

/** The YAML configuration file (DESIGN §10), validated at load; types derive from it. */
export const ConfigSchema = z.strictObject({
  redis: RedisSchema,
  namespaces: NamespacesSchema,
  sessions: SessionsSchema,
  limits: LimitsSchema,
  edits: EditsSchema,
  worker: WorkerSchema,
  queue: QueueSchema,
  shutdown: ShutdownSchema,
  http: HttpSchema.optional(),
  telegram: TelegramSchema.optional(),
  matrix: MatrixSchema.optional(),
  shell: ShellSchema,
  audit: AuditSchema,
  /** Scheduled asks (DESIGN §8a), held by bullmq's job schedulers. */
  schedules: z.array(ScheduleConfigSchema).default([]),
  /** Signed webhooks, served at `POST /hooks/<name>` on the `http` server. */
  hooks: z.array(HookConfigSchema).default([]),
  proactive: ProactiveSettingsSchema,
});
export type Config = z.infer<typeof ConfigSchema>;

export { NamespaceConfigSchema, NamespaceToolsSchema, DiscoverySchema } from "./config/namespaces.js";
export type { NamespaceConfig } from "./config/namespaces.js";
export type { TelegramConfig, TelegramLimits } from "./config/telegram.js";
export type { MatrixConfig } from "./config/matrix.js";
export type { EditsConfig } from "./config/edits.js";
export type { ShellConfig } from "./config/shell.js";
export type { ApprovalsConfig } from "./config/roles.js";
export { expandEnv } from "./config-env.js";
export type { ConfigIssue } from "./config-issues.js";
export { issueLine as issueLineOf } from "./config-issues.js";

/** Everything `roomgate config check` reports: the config when valid, every error, every warning. */
export interface ConfigReport {
  config?: Config;
  errors: ConfigIssue[];
  warnings: ConfigIssue[];
}

/**
 * Validates configuration text completely without starting anything: YAML syntax,
 * `${VAR}` references, every field (unknown keys included) and the checks across
 * fields, all collected so that every mistake is reported at once.
 */
export function checkConfigText(text: string, env: NodeJS.ProcessEnv = process.env): ConfigReport {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  if (doc.errors.length > 0) {
    return {
      errors: doc.errors.map((err) => ({ path: "(file)", message: `not valid YAML: ${err.message}` })),
      warnings: [],
    };
  }
  const raw: unknown = doc.toJS() ?? {};
  const errors: ConfigIssue[] = [];
  const use: EnvUse = { fromEnv: new Set(), empty: new Map() };
  const expanded = expandEnv(raw, env, errors, [], use);
  // Known as secrets before anything is checked, so no message below can show one.
  for (const secret of secretsOf(expanded, use.fromEnv)) registerSecret(secret);
  const result = ConfigSchema.safeParse(expanded);
  if (!result.success) {
    errors.splice(
      0,
      errors.length,
      ...fieldIssues(errors, fromZodIssues(ConfigSchema, result.error.issues), expanded, use.empty),
    );
  }
  const across = checkAcrossFields(expanded);
  const strength = secretStrengthIssues(expanded);
  errors.push(...across.errors, ...strength.errors);
  if (result.success) errors.push(...checkProactive(result.data));
  return {
    ...(result.success && errors.length === 0 ? { config: result.data } : {}),
    errors: placeIssues(errors, doc, lines),
    warnings: placeIssues([...across.warnings, ...strength.warnings, ...routerHints(expanded)], doc, lines),
  };
}

/** Parses and validates configuration text; a ConfigError lists every problem with its full path. */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env): Config {
  return validConfig(checkConfigText(text, env)).config;
}

function validConfig(report: ConfigReport): { config: Config; warnings: ConfigIssue[] } {
  if (report.config) return { config: report.config, warnings: report.warnings };
  const lines = report.errors.map(issueLine);
  const message =
    lines.length === 1 ? lines[0]! : `the configuration has ${lines.length} errors:\n  ${lines.join("\n  ")}`;
  throw new ConfigError(message, { issues: report.errors });
}

/** Reads a configuration file's text; an unreadable file is a ConfigError naming it. */
export function readConfigFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read configuration file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Reads, expands and validates a YAML configuration file. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  return parseConfig(readConfigFile(file), env);
}

/** Like `loadConfig`, also returning the warnings, for a start to log. */
export function loadConfigWithWarnings(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): { config: Config; warnings: ConfigIssue[] } {
  return validConfig(checkConfigText(readConfigFile(file), env));
}
