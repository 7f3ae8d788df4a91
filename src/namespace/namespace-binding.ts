import type { NamespaceConfig } from "../core/config.js";
import { matchesAny, permitted } from "./tool-filter.js";

/**
 * What a namespace's binding says, apart from any connection: its prefix, its router,
 * which tools it trusts or confirms, its discovery tools. The client extends it, so
 * the engine asks one object both what the binding allows and what the server has.
 */
export class NamespaceBinding {
  readonly prefix: string;

  constructor(
    readonly name: string,
    protected readonly config: NamespaceConfig,
  ) {
    this.prefix = config.prefix ?? `${name}.`;
  }

  /** Name of the namespace's router tool; null when the binding says it has none (`ask: false`). */
  get askTool(): string | null {
    if (this.config.ask === false) return null;
    return this.config.ask ?? `${this.prefix}ask`;
  }

  /** True when the binding names its router itself (`ask: <tool>`), rather than taking the default. */
  get askConfigured(): boolean {
    return typeof this.config.ask === "string";
  }

  /** How long a question the server asks (elicitation) waits for the room's answer. */
  get elicitTimeoutMs(): number {
    return this.config.elicitTimeoutSeconds * 1000;
  }

  /** True when the binding asks for an approval of the tool whatever its annotations say (`tools.confirm`). */
  mustConfirm(tool: string): boolean {
    return matchesAny(tool, this.config.tools.confirm);
  }

  /** True when the binding trusts the tool to run without an approval (`tools.trust`). */
  isTrusted(tool: string): boolean {
    return matchesAny(tool, this.config.tools.trust);
  }

  /**
   * True when the binding's `tools.allow` / `tools.deny` let this name exist for the
   * room: a listed tool, or an address sent to the namespace's discovery tools.
   */
  permits(name: string): boolean {
    return permitted(name, this.config.tools);
  }

  /** The namespace's own discovery tools (search / describe / call by address), when configured. */
  get discovery(): NamespaceConfig["discovery"] {
    return this.config.discovery;
  }

  /** Name of the namespace's tool-listing tool. */
  get toolsTool(): string {
    return `${this.prefix}tools`;
  }
}
