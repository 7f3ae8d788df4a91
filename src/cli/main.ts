import { Command } from "commander";
import { loadConfig, loadConfigWithWarnings, type Config } from "../core/config.js";
import { ConfigError, RoomgateError } from "../core/errors.js";
import { routeProcessWarnings } from "../core/library-log.js";
import { scrubSecrets } from "../core/log.js";
import { findConfigFile, loadEnvFile, resolveConfigFile } from "./config-file.js";
import { demoConfig } from "./demo-config.js";
import { packageVersion } from "./paths.js";
import { runBench } from "./run-bench.js";
import { runCheck } from "./run-check.js";
import { runDoctor } from "./run-doctor.js";
import { runHealth } from "./run-health.js";
import { runInit, type InitOptions } from "./run-init.js";
import { runConfigCheck } from "./run-config-check.js";
import { runDeadLetters } from "./run-dead-letters.js";
import { runAuditExport, runPair, runUsersList, runUsersRemove } from "./run-permissions.js";
import { runService } from "./run-service.js";
import { runShell } from "./run-shell.js";
import { registerMatrixCommands } from "./matrix/matrix-commands.js";

interface CheckOptions {
  config?: string;
  namespace?: string;
  command?: string;
  url?: string;
  header?: string[];
  prefix?: string;
  ask?: string;
  deny?: string[];
  require: string;
  question?: string[];
}

routeProcessWarnings();

const program = new Command()
  .name("roomgate")
  .description("Chat rooms in front of MCP agent namespaces; Answers shown verbatim.")
  .version(packageVersion(), "-v, --version", "print the version")
  .option("--env-file <file>", "environment file to load (default: .env beside the configuration, else here)")
  .showHelpAfterError();

/** Where `-c` looks when it is not given, for every command's help. */
const CONFIG_HELP =
  "YAML configuration (default: ./roomgate.yaml, $XDG_CONFIG_HOME/roomgate/, /etc/roomgate/)";

/** The environment file loaded before the command ran, if any (the doctor checks its mode). */
let envFile: string | undefined;

// Before any command runs: the environment file, so the configuration's ${VAR}s see it.
program.hook("preAction", (_program, action) => {
  const takesConfig = action.options.some((o) => o.long === "--config");
  const given = action.opts<{ config?: string }>().config;
  envFile = loadEnvFile(
    program.opts<{ envFile?: string }>().envFile,
    takesConfig ? findConfigFile(given) : undefined,
  );
});

/** The configuration a command runs with: `-c`, or the first default file found. */
function configFrom(opts: { config?: string }): Config {
  return loadConfig(resolveConfigFile(opts.config));
}

program
  .command("init")
  .description(
    "Write a minimal configuration and a commented .env beside it, asking what is not given; then say what to run next",
  )
  .option("-c, --config <file>", "where to write the configuration", "roomgate.yaml")
  .option("--platform <name>", "telegram or matrix")
  .option("--token-env <name>", "the environment variable holding the token")
  .option("--namespace <name>", "the first namespace (feed, runs, kg, sym: the bundled demo)")
  .option("--command <line>", "its MCP server as a command line")
  .option("--url <url>", "its MCP server as a Streamable HTTP URL")
  .option("--users <ids>", "who may talk, comma-separated (Telegram: numeric ids; empty: pair later)")
  .option("--homeserver <url>", "Matrix: the homeserver")
  .option("--room <id>", "Matrix: the room id")
  .option("-y, --yes", "ask nothing: defaults for what is not given")
  .option("--force", "replace existing files")
  .action(async (opts: InitOptions) => {
    process.exitCode = await runInit(opts);
  });

program
  .command("start")
  .description("Adapters and workers from a YAML configuration (Telegram bots, Matrix rooms)")
  .option("-c, --config <file>", CONFIG_HELP)
  .option(
    "--receive-only",
    "receive and queue only: every turn runs on `roomgate worker` processes (start at least one)",
  )
  .action(async (opts: { config?: string; receiveOnly?: boolean }) => {
    await runService({
      ...loadConfigWithWarnings(resolveConfigFile(opts.config)),
      receivers: true,
      workers: !opts.receiveOnly,
    });
  });

program
  .command("worker")
  .description("Workers only: run turns queued by `start` processes, sharing the load through Redis")
  .option("-c, --config <file>", CONFIG_HELP)
  .action(async (opts: { config?: string }) => {
    await runService({
      ...loadConfigWithWarnings(resolveConfigFile(opts.config)),
      receivers: false,
      workers: true,
    });
  });

program
  .command("dead-letters")
  .description("List the turns that could not be delivered by their deadline, or re-queue them")
  .option("-c, --config <file>", CONFIG_HELP)
  .option("--requeue <id>", "re-queue one dead letter into its room")
  .option("--all", "re-queue every dead letter")
  .action(async (opts: { config?: string; requeue?: string; all?: boolean }) => {
    process.exitCode = await runDeadLetters({
      config: configFrom(opts),
      requeue: opts.requeue,
      all: opts.all,
    });
  });

program
  .command("pair")
  .description(
    "Print a one-time code (1 h, single use) that adds whoever sends /pair <code> to a binding's users",
  )
  .option("-c, --config <file>", CONFIG_HELP)
  .requiredOption("-b, --binding <name>", "the binding (`roomgate users list` names them)")
  .action(async (opts: { config?: string; binding: string }) => {
    process.exitCode = await runPair({ config: configFrom(opts), binding: opts.binding });
  });

const users = program.command("users").description("The users of each binding: configured and paired");
users
  .command("list")
  .description("List each binding's users, from the configuration and from pairing")
  .option("-c, --config <file>", CONFIG_HELP)
  .option("-b, --binding <name>", "only this binding")
  .action(async (opts: { config?: string; binding?: string }) => {
    process.exitCode = await runUsersList({ config: configFrom(opts), binding: opts.binding });
  });
users
  .command("remove")
  .description("Take a paired user off a binding (recorded in the audit trail)")
  .option("-c, --config <file>", CONFIG_HELP)
  .requiredOption("-b, --binding <name>", "the binding")
  .argument("<user>", "the user: tg:123 or 123 (Telegram), @alice:example.org (Matrix), alice (terminal)")
  .action(async (user: string, opts: { config?: string; binding: string }) => {
    process.exitCode = await runUsersRemove({ config: configFrom(opts), binding: opts.binding, user });
  });

program
  .command("audit")
  .description("The audit trail: approvals, pairings, destructive calls")
  .command("export")
  .description("Print the trail since a time as JSON lines, oldest first")
  .option("-c, --config <file>", CONFIG_HELP)
  .option("--since <when>", "a duration back from now (24h, 30m, 7d) or a date", "24h")
  .action(async (opts: { config?: string; since: string }) => {
    process.exitCode = await runAuditExport({ config: configFrom(opts), since: opts.since });
  });

registerMatrixCommands(program);

program
  .command("demo")
  .description("Everything embedded: private Redis, the demo namespaces, a worker and a terminal room")
  .option(
    "-n, --namespace <name>",
    `namespace of the terminal room (${Object.keys(demoConfig().namespaces).join(", ")})`,
    "feed",
  )
  .option("-r, --room <name>", "room name; the same name continues the same conversation")
  .action(async (opts: { namespace: string; room?: string }) => {
    await runShell({ config: demoConfig(), namespace: opts.namespace, room: opts.room });
  });

program
  .command("shell")
  .description("A terminal room on any configured namespace")
  .option("-c, --config <file>", CONFIG_HELP)
  .requiredOption("-n, --namespace <name>", "namespace of the room")
  .option("-r, --room <name>", "room name; the same name continues the same conversation")
  .option("-u, --user <name>", "who is typing, for a room bound in shell.rooms (default: the login name)")
  .action(async (opts: { config?: string; namespace: string; room?: string; user?: string }) => {
    await runShell({
      config: configFrom(opts),
      namespace: opts.namespace,
      room: opts.room,
      user: opts.user,
    });
  });

program
  .command("check")
  .description(
    "Check namespace servers: the MCP revision each speaks, then on each revision MCP basics and the Answer contract (every namespace of the configuration, or -n one; without a configuration the demo namespaces; or a server by --command/--url)",
  )
  .option("-c, --config <file>", CONFIG_HELP)
  .option("-n, --namespace <name>", "only this namespace")
  .option(
    "--command <line>",
    'a stdio server to check directly, e.g. "npx -y @modelcontextprotocol/server-everything"',
  )
  .option("--url <url>", "a Streamable HTTP server to check directly")
  .option("-H, --header <header...>", 'headers for --url, "Name: value"')
  .option("--prefix <prefix>", 'tool-name prefix of a server checked directly (default "")')
  .option("--ask <tool>", 'router tool of a server checked directly ("false" for none)')
  .option("--deny <pattern...>", "tools a server checked directly is bound without (as tools.deny)")
  .option("--require <level>", "exit 1 unless this level is met: basics or answer", "basics")
  .option("-q, --question <text...>", "questions to ask the router instead of the default probes")
  .action(async (opts: CheckOptions) => {
    if (opts.require !== "basics" && opts.require !== "answer") {
      throw new ConfigError(`--require must be basics or answer, not "${opts.require}"`);
    }
    const direct = opts.command !== undefined || opts.url !== undefined;
    const file = direct ? opts.config : findConfigFile(opts.config);
    const config = file ? loadConfig(file) : direct ? undefined : demoConfig();
    process.exitCode = await runCheck({
      ...opts,
      headers: opts.header,
      config,
      questions: opts.question ?? [],
      require: opts.require,
    });
  });

program
  .command("config")
  .description("Work with configuration files")
  .command("check")
  .description("Validate a configuration file completely, starting nothing; exit code 1 on errors")
  .option("-c, --config <file>", CONFIG_HELP)
  .option("--online", "also try what needs the network and the servers, as `roomgate doctor` does")
  .action(async (opts: { config?: string; online?: boolean }) => {
    const file = resolveConfigFile(opts.config);
    process.exitCode = opts.online ? await runDoctor({ file, envFile }) : runConfigCheck(file);
  });

program
  .command("health")
  .description(
    "Ask the running process's /healthz on the configured http port; exit 0 when healthy (the image's HEALTHCHECK)",
  )
  .option("-c, --config <file>", CONFIG_HELP)
  .action(async (opts: { config?: string }) => {
    process.exitCode = await runHealth(configFrom(opts));
  });

program
  .command("doctor")
  .description(
    "Check everything start needs, trying it: the configuration, ports, namespaces (started and graded), Telegram and Matrix tokens, Redis; one line per finding with its fix, exit 1 on any problem",
  )
  .option("-c, --config <file>", CONFIG_HELP)
  .action(async (opts: { config?: string }) => {
    process.exitCode = await runDoctor({ file: resolveConfigFile(opts.config), envFile });
  });

program
  .command("bench")
  .description(
    "The benchmark (npm run bench): roomgate start against a bare grammY bot, same tool and Bot API stand-in",
  )
  .option("--quick", "shorter workloads (about two minutes)")
  .option("--smoke", "one short workload, two arms: checks that the benchmark runs")
  .action(async (opts: { quick?: boolean; smoke?: boolean }) => {
    process.exitCode = await runBench([
      ...(opts.quick ? ["--quick"] : []),
      ...(opts.smoke ? ["--smoke"] : []),
    ]);
  });

program
  .command("demo-server")
  .description("The bundled demo MCP server on stdio (ATTEST_TOOLS=feed,… restricts it)")
  .action(async () => {
    const { main } = await import("../demo/server.js");
    await main();
    // Serve until the client closes stdin, as a stdio MCP server does.
    await new Promise((resolve) => process.stdin.once("end", resolve));
  });

program
  .parseAsync(process.argv)
  .then(() => {
    // Every command has shut its parts down by now; libraries' leftover timers
    // (ioredis, the MCP SDK) should not hold a scripted shell open.
    process.exit(process.exitCode ?? 0);
  })
  .catch((err: unknown) => {
    // Masked: a library's error may quote a token (in a URL, say).
    if (err instanceof RoomgateError) {
      console.error(scrubSecrets(`roomgate: ${err.userText}`));
    } else {
      console.error(scrubSecrets(`roomgate: ${(err as Error)?.stack ?? String(err)}`));
    }
    process.exit(1);
  });
