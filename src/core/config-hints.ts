import { closest } from "./did-you-mean.js";
import { formatPath, issueAt, type ConfigIssue } from "./config-issues.js";
import { botIdPart } from "./telegram-token.js";

/** A Telegram user list entry (`users`, `callers`, `approvers`) of a bot or of one of its groups. */
const TELEGRAM_PEOPLE = /^telegram\.bots\[(\d+)\](?:\.groups\[\d+\])?\.(?:users|callers|approvers)\[\d+\]$/;

/** zod's wording for a missing field. */
const MISSING = /^Invalid input: expected (\w+), received undefined$/;

type Tree = Record<string, unknown>;

/** The binding name `roomgate pair --binding` takes for a Telegram bot's direct chats. */
function botBinding(raw: unknown, index: number): string {
  const bot = ((raw as Tree | undefined)?.telegram as Tree | undefined)?.bots as Tree[] | undefined;
  const entry = bot?.[index];
  if (typeof entry?.name === "string") return entry.name;
  const id = typeof entry?.token === "string" ? botIdPart(entry.token) : undefined;
  return id === undefined ? "NAME" : `telegram:${id}`;
}

/**
 * The field errors of a configuration in the words that lead to the fix: an unknown
 * key first and alone (its value, an unset `${VAR}` included, does not matter, and
 * the key it was meant to be is not reported missing as well); "required" instead of
 * zod's "received undefined"; and for a Telegram user that is not a number, how to
 * find one's id; a value an empty variable left wrong names the variable.
 * `envIssues` are the unset variables, `zodIssues` the schema's, `empty` the values
 * that are one reference to an empty variable.
 */
export function fieldIssues(
  envIssues: ConfigIssue[],
  zodIssues: ConfigIssue[],
  raw: unknown,
  empty: ReadonlyMap<string, string> = new Map(),
): ConfigIssue[] {
  const unknown = zodIssues.filter((i) => i.unknownKey);
  const unknownPaths = new Set(unknown.map((i) => i.path));
  const meant = new Set(
    unknown.flatMap((i) => (i.meant && i.keys ? [formatPath([...i.keys.slice(0, -1), i.meant])] : [])),
  );
  const env = envIssues.filter((i) => !unknownPaths.has(i.path));
  // A field whose variable is unset is reported once, as the unset variable.
  const unset = new Set(env.map((i) => i.path));
  const fields = zodIssues
    .filter((i) => i.unknownKey || !unset.has(i.path))
    .filter((i) => !(meant.has(i.path) && MISSING.test(i.message)))
    .map((i) => {
      // A value its variable left empty (`TOKEN=` in a .env) is wrong because of the variable.
      const variable = empty.get(i.path);
      return variable
        ? { ...i, message: `environment variable ${variable} is empty (set it, e.g. in .env)` }
        : { ...i, message: reworded(i, raw) };
    });
  return [...env, ...fields];
}

function reworded(issue: ConfigIssue, raw: unknown): string {
  const missing = MISSING.exec(issue.message);
  if (missing) return `required (${missing[1] === "array" ? "a list" : `a ${missing[1]}`})`;
  const person = TELEGRAM_PEOPLE.exec(issue.path);
  if (person && /expected number/.test(issue.message)) {
    return (
      "Telegram user ids are numbers (like 123456789), not names; to find yours, leave the list empty, " +
      `start roomgate, run \`roomgate pair --binding ${botBinding(raw, Number(person[1]))}\` and send the bot the /pair code it prints`
    );
  }
  return issue.message;
}

/**
 * A router name that is probably a typo of the usual one (`ask: feed.asks` for
 * `feed.ask`), or outside the namespace's prefix, where no tool of the namespace is:
 * caught here, without starting the server (`roomgate doctor` checks it against the
 * server's own tool list).
 */
export function routerHints(raw: unknown): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const namespaces = ((raw as Tree | undefined)?.namespaces ?? {}) as Record<string, unknown>;
  for (const [name, value] of Object.entries(namespaces)) {
    const ns = (value ?? {}) as Tree;
    if (typeof ns.ask !== "string") continue;
    const prefix = typeof ns.prefix === "string" ? ns.prefix : `${name}.`;
    const usual = `${prefix}ask`;
    if (ns.ask === usual) continue;
    if (!ns.ask.startsWith(prefix)) {
      out.push(
        issueAt(
          ["namespaces", name, "ask"],
          `"${ns.ask}" is not under the namespace's prefix "${prefix}", so no tool of the namespace has that name`,
        ),
      );
    } else if (closest(ns.ask, [usual])) {
      out.push(
        issueAt(
          ["namespaces", name, "ask"],
          `no router is usually named "${ns.ask}"; did you mean "${usual}"?`,
        ),
      );
    }
  }
  return out;
}
