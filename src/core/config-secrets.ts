import { formatPath, issueAt, type ConfigIssue } from "./config-issues.js";
import { TELEGRAM_TOKEN } from "./telegram-token.js";

/** A configuration key whose value is a secret wherever it appears (`token`, `storeKey`, `secret`, …). */
const SECRET_KEY = /token|secret|password|passphrase|storekey|recoverykey|apikey|credential/i;

/** An environment variable name that says its value is a secret (`GITHUB_TOKEN`, `DB_PASSWORD`, `API_KEY`). */
const SECRET_ENV = /token|secret|passw|passphrase|(^|_)key($|_)|apikey|auth|credential|cookie/i;

/**
 * Hook secrets are HMAC keys, checked at the edge: shorter than this, and a signature
 * can be forged by trying keys (Telegram asks the same of its secret_token).
 */
export const MIN_HOOK_SECRET = 16;

/** Shorter than this, a Matrix access token is not one a homeserver issued. */
const MIN_MATRIX_TOKEN = 16;

/** What BotFather's tokens look like: the bot id, a colon, 35 characters (30 or more is taken). */
const BOTFATHER_TOKEN = /^\d+:[A-Za-z0-9_-]{30,}$/;

type Tree = Record<string, unknown>;

function walk(
  value: unknown,
  path: PropertyKey[],
  visit: (path: PropertyKey[], value: string) => void,
): void {
  if (typeof value === "string") return visit(path, value);
  if (Array.isArray(value)) return value.forEach((v, i) => walk(v, [...path, i], visit));
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) walk(v, [...path, k], visit);
  }
}

/** The password of a URL (`redis://user:pw@host`), decoded, when it has one. */
function urlPassword(text: string): string | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(text)) return undefined;
  try {
    const password = new URL(text).password;
    return password === "" ? undefined : decodeURIComponent(password);
  } catch {
    return undefined;
  }
}

/**
 * Every secret of an expanded configuration tree, valid or not, so that nothing a
 * check, a start or a log line prints can show one: values under secret keys
 * (tokens, `storeKey`, hook `secret`s, passwords), every namespace `headers` value,
 * a namespace `env` value whose name says it is a secret or that came from the
 * environment (`fromEnv`: the paths a `${VAR}` filled), and passwords inside URLs.
 */
export function secretsOf(raw: unknown, fromEnv: ReadonlySet<string> = new Set()): string[] {
  const found = new Set<string>();
  walk(raw, [], (path, value) => {
    const key = String(path.at(-1) ?? "");
    const section = path.length >= 4 && path[0] === "namespaces" ? path[2] : undefined;
    const envVar = section === "env" && (SECRET_ENV.test(key) || fromEnv.has(formatPath(path)));
    if (SECRET_KEY.test(key) || section === "headers" || envVar) found.add(value);
    // `Authorization: Bearer <token>`: the credential alone may show up too.
    const credential = section === "headers" ? /^\S+\s+(\S+)$/.exec(value)?.[1] : undefined;
    if (credential) found.add(credential);
    const password = urlPassword(value);
    if (password) found.add(password);
  });
  found.delete("");
  return [...found];
}

/**
 * Secrets too short to be safe (errors) or that do not look like what they should be
 * (warnings): a hook secret under 16 characters, a Telegram token that is not
 * BotFather's shape, a Matrix access token too short to be a real one.
 */
export function secretStrengthIssues(raw: unknown): { errors: ConfigIssue[]; warnings: ConfigIssue[] } {
  const errors: ConfigIssue[] = [];
  const warnings: ConfigIssue[] = [];
  const root = (raw !== null && typeof raw === "object" ? raw : {}) as Tree;
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
  list(root.hooks).forEach((hook, i) => {
    const secret = (hook as Tree | null)?.secret;
    if (typeof secret === "string" && secret.length > 0 && secret.length < MIN_HOOK_SECRET) {
      errors.push(
        issueAt(
          ["hooks", i, "secret"],
          `too short: ${secret.length} characters, at least ${MIN_HOOK_SECRET} needed (e.g. \`openssl rand -hex 32\`)`,
        ),
      );
    }
  });
  const telegram = root.telegram as Tree | undefined;
  list(telegram?.bots).forEach((bot, i) => {
    const token = (bot as Tree | null)?.token;
    if (typeof token === "string" && TELEGRAM_TOKEN.test(token) && !BOTFATHER_TOKEN.test(token)) {
      warnings.push(
        issueAt(
          ["telegram", "bots", i, "token"],
          "does not look like a token from BotFather (<bot id>:<35 characters>); Telegram will refuse it",
        ),
      );
    }
  });
  const matrix = root.matrix as Tree | undefined;
  const token = matrix?.accessToken;
  if (typeof token === "string" && token.length > 0 && token.length < MIN_MATRIX_TOKEN) {
    warnings.push(
      issueAt(
        ["matrix", "accessToken"],
        `does not look like an access token (${token.length} characters); the homeserver will refuse it`,
      ),
    );
  }
  return { errors, warnings };
}
