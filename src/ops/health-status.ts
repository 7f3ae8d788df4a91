import { scrubSecrets } from "../core/log.js";

/** One part of the process that is not working, as /healthz names it. */
export interface Degradation {
  component: string;
  reason: string;
}

/**
 * What is not working in this process while the rest runs (a bot whose token was
 * refused, say): parts report here, /healthz shows the list.
 */
export class HealthStatus {
  private readonly problems = new Map<string, string>();

  /** Marks a component as not working, with the reason an operator reads. */
  degrade(component: string, reason: string): void {
    // A reason often quotes a library's error, which may carry a token in a URL.
    this.problems.set(component, scrubSecrets(reason));
  }

  /** Marks a component as working again. */
  recover(component: string): void {
    this.problems.delete(component);
  }

  /** Everything not working right now. */
  degraded(): Degradation[] {
    return [...this.problems].map(([component, reason]) => ({ component, reason }));
  }
}

/** The process's health status, shared by its parts like the metrics registry. */
export const healthStatus = new HealthStatus();
