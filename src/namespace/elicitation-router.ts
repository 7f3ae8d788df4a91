import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/client";

/** Answers one `elicitation/create` request of a running call: asks the person, resolves to their answer. */
export type ElicitHandler = (params: ElicitRequest["params"], signal: AbortSignal) => Promise<ElicitResult>;

/**
 * Routes a 2025-11-25 server's `elicitation/create` to the call that caused it. That
 * revision does not name the call on the wire (over stdio nothing ties the request to
 * a tools/call), so a request is routed only when one call that can ask is in flight
 * on this connection; with several, nobody can tell whose it is, and it is declined.
 * (On 2026-07-28 the question comes back in the call's own reply: input-rounds.ts.)
 */
export class ElicitationRouter {
  private readonly handlers = new Map<number, ElicitHandler>();
  private next = 0;

  /** Registers the handler of a call for as long as it runs; the returned function unregisters it. */
  register(handler: ElicitHandler): () => void {
    const id = (this.next += 1);
    this.handlers.set(id, handler);
    return () => this.handlers.delete(id);
  }

  /** Answers a request: through the one call that can ask, or declined. */
  async handle(params: ElicitRequest["params"], signal: AbortSignal): Promise<ElicitResult> {
    if (params.mode === "url") return { action: "decline" };
    if (this.handlers.size !== 1) return { action: "decline" };
    const [handler] = this.handlers.values();
    return handler!(params, signal);
  }
}
