import { botIdPart } from "./telegram-token.js";
import { formatPath, issueAt, type ConfigIssue } from "./config-issues.js";
import { checkRoles } from "./config-role-checks.js";
import { renamedKeyWarnings } from "./config/renamed-keys.js";

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
  // A voice tool is served by the namespace it names, or the one whose prefix the tool has.
  const prefixes = Object.entries(tree(root.namespaces) ?? {}).map(([name, ns]) => {
    const prefix = tree(ns)?.prefix;
    return [name, typeof prefix === "string" ? prefix : `${name}.`] as const;
  });
  const checkVoice = (value: unknown, path: PropertyKey[]) => {
    const v = tree(value);
    if (!v || typeof v.tool !== "string") return;
    if (v.namespace !== undefined) return checkNamespace(v.namespace, [...path, "namespace"]);
    const owner = prefixes.find(([, prefix]) => prefix !== "" && (v.tool as string).startsWith(prefix));
    if (owner) used.add(owner[0]);
    else {
      errors.push(
        issueAt(
          [...path, "tool"],
          `no configured namespace has the prefix of "${v.tool}"; name its namespace with voice.namespace`,
        ),
      );
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
      const b = tree(bot);
      if (!b) return;
      const at = ["telegram", "bots", i];
      checkNamespace(b.namespace, [...at, "namespace"]);
      checkVoice(b.voice, [...at, "voice"]);
      list(b.topics).forEach((topic, j) => {
        checkNamespace(tree(topic)?.namespace, [...at, "topics", j, "namespace"]);
        checkVoice(tree(topic)?.voice, [...at, "topics", j, "voice"]);
      });
      list(b.groups).forEach((group, j) => {
        const g = tree(group);
        checkNamespace(g?.namespace, [...at, "groups", j, "namespace"]);
        checkVoice(g?.voice, [...at, "groups", j, "voice"]);
        for (const [id, ns] of Object.entries(tree(g?.topics) ?? {})) {
          checkNamespace(ns, [...at, "groups", j, "topics", id]);
        }
      });
    });
  }

  const matrix = tree(root.matrix);
  if (matrix && matrix.encryption === "required" && matrix.storeKey === undefined) {
    errors.push(
      issueAt(
        ["matrix", "storeKey"],
        'required when matrix.encryption is "required": the device\'s keys are kept in Redis encrypted with it (storeKey: ${MATRIX_STORE_KEY})',
      ),
    );
  }
  list(matrix?.rooms).forEach((room, i) => {
    const r = tree(room);
    if (!r) return;
    checkNamespace(r.namespace, ["matrix", "rooms", i, "namespace"]);
    if (typeof r.room === "string") {
      once(`room:${r.room}`, ["matrix", "rooms", i, "room"], `room "${r.room}" is bound twice`);
    }
  });

  checkRoles(root, errors, warnings);
  warnings.push(...renamedKeyWarnings(root));

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
 * `webhook` section, a bot has a namespace or topics, no topic name is listed twice,
 * and no bot (nor a bot's group) is configured twice. The config
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
    if (b.namespace === undefined && list(b.topics).length === 0) {
      errors.push(
        issueAt(
          ["telegram", "bots", i, "namespace"],
          "required unless the bot lists `topics` (one namespace per private-chat topic)",
        ),
      );
    }
    const names = new Map<string, number>();
    list(b.topics).forEach((topic, j) => {
      const name = tree(topic)?.name;
      if (typeof name !== "string") return;
      const earlier = names.get(name.trim().toLowerCase());
      if (earlier === undefined) return void names.set(name.trim().toLowerCase(), j);
      errors.push(
        issueAt(
          ["telegram", "bots", i, "topics", j, "name"],
          `topic "${name}" is listed twice (also at topics[${earlier}])`,
        ),
      );
    });
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
