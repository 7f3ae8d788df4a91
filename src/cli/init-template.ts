import { stringify } from "yaml";

/** What `roomgate init` asked (or was given): enough for a configuration that starts. */
export interface InitAnswers {
  platform: "telegram" | "matrix";
  /** The environment variable holding the bot's token (Telegram) or access token (Matrix). */
  tokenEnv: string;
  namespace: string;
  /** How the namespace's server is reached: a child process or a Streamable HTTP URL. */
  server: { command: string[]; env?: Record<string, string> } | { url: string };
  /** True when the server is the bundled demo (its tools are `<namespace>.*`, with a router). */
  demo: boolean;
  /** Who may talk: Telegram user ids, or Matrix user ids. */
  users: (number | string)[];
  homeserver?: string;
  room?: string;
}

/** A YAML value as it goes on one line (`[a, b]`, `"x"`). */
function flow(value: unknown): string {
  return stringify(value, { collectionStyle: "flow", lineWidth: 0 }).trim();
}

function namespaceBlock(a: InitAnswers): string[] {
  const lines = [
    "namespaces:",
    "  # The agent behind the room: an MCP server started as a child process (command:)",
    "  # or reached over Streamable HTTP (url:).",
    `  ${a.namespace}:`,
  ];
  if ("url" in a.server) lines.push(`    url: ${flow(a.server.url)}`);
  else {
    lines.push(`    command: ${flow(a.server.command)}`);
    if (a.server.env) lines.push(`    env: ${flow(a.server.env)}`);
  }
  if (!a.demo) {
    lines.push(
      `    # prefix: ""      # when the server's tools are not named ${a.namespace}.<tool>`,
      `    # ask: false      # when it has no router tool (${a.namespace}.ask); docs/routers.md says what one is`,
    );
  }
  return lines;
}

function telegramBlock(a: InitAnswers): string[] {
  return [
    "telegram:",
    "  bots:",
    `    - token: \${${a.tokenEnv}}   # from .env beside this file; never written here`,
    `      namespace: ${a.namespace}`,
    `      name: ${a.namespace}   # the binding's name: roomgate pair --binding ${a.namespace}`,
    "      # Who may talk to the bot: numeric Telegram user ids. Not known yet? Leave it",
    `      # empty, start roomgate, run \`roomgate pair --binding ${a.namespace}\` and send the bot`,
    "      # the /pair code it prints.",
    `      users: ${flow(a.users)}`,
  ];
}

function matrixBlock(a: InitAnswers): string[] {
  return [
    "matrix:",
    `  homeserver: ${flow(a.homeserver ?? "https://matrix.example.org")}`,
    `  accessToken: \${${a.tokenEnv}}   # from .env beside this file; never written here`,
    "  storeKey: ${MATRIX_STORE_KEY}   # seals the bot device's keys in Redis",
    "  rooms:",
    `    - room: ${flow(a.room ?? "!room:example.org")}   # the room id (Room settings → Advanced), not an alias`,
    `      namespace: ${a.namespace}`,
    `      name: ${a.namespace}`,
    "      # Who may talk to the bot in this room: Matrix user ids.",
    `      users: ${flow(a.users)}`,
  ];
}

/** The minimal configuration `roomgate init` writes, with a comment on each part. */
export function configText(a: InitAnswers, reference: string): string {
  return [
    "# roomgate configuration, written by `roomgate init`.",
    `# Every key, explained: ${reference}`,
    "# Secrets live in .env beside this file (every roomgate command loads it).",
    "#",
    "#   roomgate doctor   checks this file, the token, the namespace, the port and Redis",
    "#   roomgate start    runs it",
    "",
    ...namespaceBlock(a),
    "",
    ...(a.platform === "telegram" ? telegramBlock(a) : matrixBlock(a)),
    "",
    "# /healthz and /metrics. Without a redis section, a private redis-server is started",
    "# (REDIS_URL in .env names another).",
    "http: { host: 127.0.0.1, port: 9464 }",
    "",
  ].join("\n");
}

/** The `.env` template beside it: every variable the configuration reads, explained, secrets empty. */
export function envText(a: InitAnswers): string {
  const token =
    a.platform === "telegram"
      ? ["# The bot's token from @BotFather (/newbot): 123456789:AA…", `${a.tokenEnv}=`]
      : [
          "# The bot account's access token (docs/matrix.md: log in once and keep access_token).",
          `${a.tokenEnv}=`,
          "# Seals the bot device's keys in Redis: `openssl rand -base64 32`, at least 16 characters.",
          "MATRIX_STORE_KEY=",
        ];
  return [
    "# Secrets and settings for roomgate.yaml, loaded by every roomgate command;",
    "# what the environment already has wins. Private to you: roomgate init made it 0600.",
    "",
    ...token,
    "",
    "# Another Redis instead of the private embedded one (optional):",
    "# REDIS_URL=redis://:password@127.0.0.1:6379",
    "# How much the log says: fatal, error, warn, info (the default), debug or trace.",
    "# LOG_LEVEL=info",
    "",
  ].join("\n");
}
