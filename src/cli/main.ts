import { Command } from "commander";
import { loadConfig } from "../core/config.js";
import { RoomgateError } from "../core/errors.js";
import { demoConfig } from "./demo-config.js";
import { runShell } from "./run-shell.js";

const program = new Command()
  .name("roomgate")
  .description("Chat rooms in front of MCP agent namespaces; Answers shown verbatim.")
  .showHelpAfterError();

program
  .command("demo")
  .description("Everything embedded: private Redis, the demo namespaces, a worker and a terminal room")
  .option("-n, --namespace <name>", "namespace of the terminal room (feed, runs, kg, sym)", "feed")
  .option("-r, --room <name>", "room name; the same name continues the same conversation")
  .action(async (opts: { namespace: string; room?: string }) => {
    await runShell({ config: demoConfig(), namespace: opts.namespace, room: opts.room });
  });

program
  .command("shell")
  .description("A terminal room on any configured namespace")
  .requiredOption("-c, --config <file>", "YAML configuration")
  .requiredOption("-n, --namespace <name>", "namespace of the room")
  .option("-r, --room <name>", "room name; the same name continues the same conversation")
  .action(async (opts: { config: string; namespace: string; room?: string }) => {
    await runShell({ config: loadConfig(opts.config), namespace: opts.namespace, room: opts.room });
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
    // (bullmq, ioredis) should not hold a scripted shell open.
    process.exit(0);
  })
  .catch((err: unknown) => {
    if (err instanceof RoomgateError) {
      console.error(`roomgate: ${err.userText}`);
    } else {
      console.error(`roomgate: ${(err as Error)?.stack ?? String(err)}`);
    }
    process.exit(1);
  });
