import type { Config } from "../core/config.js";
import { NamespaceError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { NamespaceClient } from "./namespace-client.js";
import type { TaskLedger } from "./task-call.js";

/** The configured namespaces of one process, each connected on first use. */
export class NamespaceRegistry {
  private readonly clients = new Map<string, NamespaceClient>();

  constructor(config: Config, log: Logger) {
    for (const [name, ns] of Object.entries(config.namespaces)) {
      this.clients.set(name, new NamespaceClient(name, ns, log.child({ namespace: name }), config.limits));
    }
  }

  /** The client of one namespace; a name that is not configured is a clear error. */
  get(name: string): NamespaceClient {
    const client = this.clients.get(name);
    if (!client) {
      throw new NamespaceError(name, `namespace ${name} is not configured`, {
        userText: `This room is bound to "${name}", which is not configured.`,
      });
    }
    return client;
  }

  /** Gives every namespace the place where its task tools keep their task ids. */
  useTaskLedger(ledger: TaskLedger): void {
    for (const client of this.clients.values()) client.tasks = ledger;
  }

  /** Names of all configured namespaces. */
  names(): string[] {
    return [...this.clients.keys()];
  }

  /** Closes every namespace connection. */
  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.close()));
  }
}
