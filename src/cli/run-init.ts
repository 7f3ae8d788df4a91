import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { checkConfigText } from "../core/config.js";
import { ConfigError } from "../core/errors.js";
import { DEMO_NAMESPACES } from "./demo-config.js";
import { CONFIG_NAME } from "./config-file.js";
import { configText, envText, type InitAnswers } from "./init-template.js";
import { demoServerEntry, packageRoot } from "./paths.js";
import { splitCommandLine } from "./command-line.js";

/** What `roomgate init` may be told on its command line instead of asked. */
export interface InitOptions {
  config?: string;
  platform?: string;
  tokenEnv?: string;
  namespace?: string;
  command?: string;
  url?: string;
  users?: string;
  homeserver?: string;
  room?: string;
  /** Ask nothing: what is not given takes its default. */
  yes?: boolean;
  force?: boolean;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/** Asks one question (or takes the given answer, or the default when not asking). */
type Ask = (question: string, fallback: string, given: string | undefined) => Promise<string>;

function asker(options: InitOptions, output: NodeJS.WritableStream): { ask: Ask; close: () => void } {
  if (options.yes) return { ask: async (_q, fallback, given) => given ?? fallback, close: () => {} };
  const input = options.input ?? process.stdin;
  const rl = createInterface({ input, output, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  // A terminal shows what is typed; answers from a pipe are shown here, one question a line.
  const echo = !(input as { isTTY?: boolean }).isTTY;
  const ask: Ask = async (question, fallback, given) => {
    if (given !== undefined) return given;
    output.write(`${question} [${fallback}]: `);
    const next = await lines.next();
    // Input that ended (a script that answered fewer questions) takes the defaults.
    const answer = next.done ? "" : String(next.value).trim();
    if (next.done || echo) output.write(`${next.done ? "" : answer}\n`);
    return answer === "" ? fallback : answer;
  };
  return { ask, close: () => rl.close() };
}

function platformOf(answer: string): "telegram" | "matrix" {
  const p = answer.trim().toLowerCase();
  if (p === "telegram" || p === "matrix") return p;
  throw new ConfigError(`platform must be telegram or matrix, not "${answer}"`);
}

function usersOf(answer: string, platform: "telegram" | "matrix"): (number | string)[] {
  const words = answer.split(/[\s,]+/).filter((w) => w !== "" && w !== "-");
  if (platform === "matrix") return words;
  return words.map((w) => {
    if (!/^\d+$/.test(w)) {
      throw new ConfigError(
        `Telegram user ids are numbers, not "${w}": leave the list empty and pair instead (roomgate pair)`,
      );
    }
    return Number(w);
  });
}

async function answers(options: InitOptions, ask: Ask): Promise<InitAnswers> {
  const platform = platformOf(await ask("Platform (telegram or matrix)", "telegram", options.platform));
  const tokenEnv = await ask(
    `Environment variable with the ${platform === "telegram" ? "bot's token" : "access token"}`,
    platform === "telegram" ? "TELEGRAM_TOKEN" : "MATRIX_TOKEN",
    options.tokenEnv,
  );
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv))
    throw new ConfigError(`"${tokenEnv}" is not a variable name`);
  const homeserver =
    platform === "matrix"
      ? await ask("Homeserver URL", "https://matrix.example.org", options.homeserver)
      : undefined;
  const room = platform === "matrix" ? await ask("Room id", "!room:example.org", options.room) : undefined;
  const namespace = await ask(
    `First namespace (${DEMO_NAMESPACES.join(", ")} are the bundled demo)`,
    "feed",
    options.namespace,
  );
  if (!/^[A-Za-z0-9_-]+$/.test(namespace)) throw new ConfigError(`"${namespace}" is not a namespace name`);
  const demo = (DEMO_NAMESPACES as readonly string[]).includes(namespace);
  const serverGiven = options.url ?? options.command;
  const serverAnswer = await ask(
    "Its MCP server: a command line, or an http(s) URL",
    demo ? "the bundled demo" : "",
    serverGiven ?? (options.yes && demo ? "the bundled demo" : undefined),
  );
  const usesDemo = demo && serverAnswer === "the bundled demo";
  if (!usesDemo && serverAnswer === "") {
    throw new ConfigError(`namespace "${namespace}" needs its server: --command "…" or --url URL`);
  }
  const server = usesDemo
    ? { command: [process.execPath, demoServerEntry], env: { ATTEST_TOOLS: namespace } }
    : /^https?:\/\//.test(serverAnswer)
      ? { url: serverAnswer }
      : { command: splitCommandLine(serverAnswer) };
  const who =
    platform === "telegram"
      ? "Who may talk: Telegram user ids, comma-separated (empty: pair later)"
      : "Who may talk: Matrix user ids, comma-separated";
  const users = usersOf(await ask(who, "", options.users), platform);
  return { platform, tokenEnv, namespace, server, demo: usesDemo, users, homeserver, room };
}

/** How a path is shown in the next steps: relative to here when below it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..") ? path : rel;
}

/**
 * `roomgate init`: asks (or takes flags for) the platform, the token's variable, the
 * first namespace and who may talk; writes a minimal configuration and a commented
 * `.env` template beside it (0600), checks the configuration as written, and says
 * the next commands. Existing files are kept unless `--force`.
 */
export async function runInit(options: InitOptions): Promise<number> {
  const out = options.output ?? process.stdout;
  const file = resolve(options.config ?? CONFIG_NAME);
  const envFile = join(dirname(file), ".env");
  for (const path of [file, envFile]) {
    if (existsSync(path) && !options.force) {
      throw new ConfigError(`${shown(path)} exists already; keep it, or run init with --force to replace it`);
    }
  }
  const { ask, close } = asker(options, out);
  let a: InitAnswers;
  try {
    a = await answers(options, ask);
  } finally {
    close();
  }
  const yaml = configText(a, join(packageRoot, "examples", "roomgate.yaml"));
  // Written only when it would validate once its secrets are filled in.
  const placeholder = Object.fromEntries(
    [a.tokenEnv, "MATRIX_STORE_KEY"].map((v) => [v, `1:${"x".repeat(40)}`]),
  );
  const report = checkConfigText(yaml, placeholder);
  if (report.errors.length > 0) {
    throw new ConfigError(
      `the configuration would not be valid: ${report.errors.map((e) => e.message).join("; ")}`,
    );
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, yaml, { mode: 0o644 });
  writeFileSync(envFile, envText(a), { mode: 0o600 });
  const c = file === resolve(CONFIG_NAME) ? "" : ` -c ${shown(file)}`;
  const steps = [
    `Wrote ${shown(file)} and ${shown(envFile)}.`,
    "",
    "Next:",
    `  1. put the ${a.platform === "telegram" ? "bot's token (from @BotFather)" : "access token and a store key"} in ${shown(envFile)}: ${a.tokenEnv}=…`,
    `  2. roomgate doctor${c}     checks everything start needs, with the fix for each problem`,
    `  3. roomgate start${c}      runs it`,
  ];
  if (a.users.length === 0) {
    steps.push(
      `  4. roomgate pair${c} --binding ${a.namespace}   (while start runs) prints a code; send the bot /pair <code>`,
    );
  }
  out.write(`${steps.join("\n")}\n`);
  return 0;
}
