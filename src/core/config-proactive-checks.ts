import type { Config } from "./config.js";
import { issueAt, type ConfigIssue } from "./config-issues.js";
import { roomTarget } from "./room-target.js";

/**
 * Checks of schedules, hooks and subscriptions that need the whole (valid)
 * configuration: each names a room bound to a namespace, names are unique, hooks
 * have the HTTP server they are served on.
 */
export function checkProactive(config: Config): ConfigIssue[] {
  const errors: ConfigIssue[] = [];
  for (const section of ["schedules", "hooks"] as const) {
    const seen = new Set<string>();
    config[section].forEach((item, i) => {
      if (seen.has(item.name)) errors.push(issueAt([section, i, "name"], `"${item.name}" is used twice`));
      seen.add(item.name);
      const target = roomTarget(config, item.room, item.namespace);
      if ("problem" in target) errors.push(issueAt([section, i, "room"], target.problem));
    });
  }
  if (config.hooks.length > 0 && !config.http) {
    errors.push(
      issueAt(["hooks"], "hooks are served by the HTTP server: add an `http:` section (port, host)"),
    );
  }
  return errors;
}
