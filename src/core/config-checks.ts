import { botIdPart } from "./telegram-token.js";
import { formatPath, issueAt, type ConfigIssue } from "./config-issues.js";
import { checkRoles } from "./config-role-checks.js";

/** What the checks across fields found: errors stop a start, warnings are only shown. */
export interface CrossFieldFindings {
  errors: ConfigIssue[];
  warnings: ConfigIssue[];
}

type Tree = Record<string, unknown>;

function tree(value: unknown): Tree | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Tree) : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * Checks that need more than one field: bindings name configured namespaces, webhook
 * mode has its `webhook` section, no bot, group or room is bound twice, and every
 * namespace is used by someone. They run on the expanded YAML tree, before or
 * whatever zod says about single fields, so that every mistake is listed at once.
 */
export function checkAcrossFields(raw: unknown): CrossFieldFindings {
  const errors: ConfigIssue[] = [];
  const warnings: ConfigIssue[] = [];
  const root = tree(raw) ?? {};
  const namespaces = Object.keys(tree(root.namespaces) ?? {});
  const used = new Set<string>();
  const knownList = namespaces.length > 0 ? namespaces.join(", ") : "none configured under namespaces";

  const checkNamespace = (value: unknown, path: PropertyKey[]) => {
    if (typeof value !== "string") return;
    used.add(value);
    if (!namespaces.includes(value)) {
      errors.push(issueAt(path, `unknown namespace "${value}" (known: ${knownList})`));
    }
  };
  const firstSeen = new Map<string, string>();
  const once = (key: string, path: PropertyKey[], what: string) => {
    const earlier = firstSeen.get(key);
    if (earlier) errors.push(issueAt(path, `${what} (also at ${earlier})`));
    else firstSeen.set(key, formatPath(path));
  };

  const telegram = tree(root.telegram);
  if (telegram) {
    const section = telegramSectionIssues(telegram);
    errors.push(...section.errors);
    warnings.push(...section.warnings);
    list(telegram.bots).forEach((bot, i) => {
      checkNamespace(tree(bot)?.namespace, ["telegram", "bots", i, "namespace"]);
    });
  }

  const matrix = tree(root.matrix);
  list(matrix?.rooms).forEach((room, i) => {
    const r = tree(room);
    if (!r) return;
    checkNamespace(r.namespace, ["matrix", "rooms", i, "namespace"]);
    if (typeof r.room === "string") {
      once(`room:${r.room}`, ["matrix", "rooms", i, "room"], `room "${r.room}" is bound twice`);
    }
  });

  checkRoles(root, errors, warnings);

  if (used.size > 0) {
    for (const name of namespaces) {
      if (used.has(name)) continue;
      warnings.push(
        issueAt(
          ["namespaces", name],
          `no Telegram bot or Matrix room uses this namespace (roomgate shell -n ${name} can still open it)`,
        ),
      );
    }
  }
  return { errors, warnings };
}

/**
 * The checks a Telegram section needs beyond its single fields: webhook mode has its
 * `webhook` section, and no bot (nor a bot's group) is configured twice. The config
 * check runs them on the file; the Telegram platform on the config it is given.
 */
export function telegramSectionIssues(section: unknown): CrossFieldFindings {
  const errors: ConfigIssue[] = [];
  const warnings: ConfigIssue[] = [];
  const telegram = tree(section) ?? {};
  if (telegram.mode === "webhook" && tree(telegram.webhook) === undefined) {
    errors.push(
      issueAt(
        ["telegram", "webhook"],
        'required when telegram.mode is "webhook" (url, secretToken, optional host and port)',
      ),
    );
  }
  if (telegram.mode !== "webhook" && telegram.webhook !== undefined) {
    warnings.push(
      issueAt(["telegram", "webhook"], 'ignored: telegram.mode is not "webhook", so the bots poll'),
    );
  }
  const firstSeen = new Map<string, string>();
  const once = (key: string, path: PropertyKey[], what: string) => {
    const earlier = firstSeen.get(key);
    if (earlier) errors.push(issueAt(path, `${what} (also at ${earlier})`));
    else firstSeen.set(key, formatPath(path));
  };
  list(telegram.bots).forEach((bot, i) => {
    const b = tree(bot);
    if (!b) return;
    const id = typeof b.token === "string" ? botIdPart(b.token) : undefined;
    if (id !== undefined) {
      once(`bot:${id}`, ["telegram", "bots", i, "token"], `the same bot (id ${id}) is configured twice`);
    }
    list(b.groups).forEach((group, j) => {
      const chat = tree(group)?.chat;
      if (typeof chat !== "number") return;
      once(
        `group:${i}:${chat}`,
        ["telegram", "bots", i, "groups", j, "chat"],
        `group ${chat} is bound twice`,
      );
    });
  });
  return { errors, warnings };
}
