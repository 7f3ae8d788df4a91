/**
 * One step of an adapter's edge chain, in grammY's middleware shape: it handles the
 * event (answers, refuses, queues or drops it) or hands it to the rest with `next`.
 */
export type EdgeStep<C> = (ctx: C, next: () => Promise<void>) => Promise<void>;

/** Runs `steps` in order over one event's context; each step runs the rest by calling `next`. */
export async function runSteps<C>(steps: readonly EdgeStep<C>[], ctx: C, from = 0): Promise<void> {
  const step = steps[from];
  if (step) await step(ctx, () => runSteps(steps, ctx, from + 1));
}
