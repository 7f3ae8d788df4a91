import type { InboundEvent } from "../core/event.js";
import type { Change } from "./changes.js";
import type { TurnContext } from "./turn-context.js";

/**
 * A step's answer when the event is not its to handle; it may still contribute
 * changes (e.g. remembering the message) that the steps after it build on.
 */
export interface Pass {
  readonly pass: readonly Change[];
}

/** What a step returns: the changes that handle the turn, or a pass. */
export type StepResult = readonly Change[] | Pass;

/** One step of a turn: an immutable context in, its changes or a pass out (grammY's middleware, as values). */
export type Step = (ctx: TurnContext) => StepResult | Promise<StepResult>;

/** Not mine: the next step decides; `changes` go on with the turn. */
export function pass(changes: readonly Change[] = []): Pass {
  return { pass: changes };
}

/** Whether a step passed. */
export function isPass(result: StepResult): result is Pass {
  return !Array.isArray(result);
}

/**
 * A step failed after earlier parts of the turn had changed things: those changes are
 * kept (as a mutable turn kept them) and the failure is turned into a line at the end.
 */
export class StepFailure extends Error {
  constructor(
    readonly changes: readonly Change[],
    readonly failure: unknown,
  ) {
    super("a turn step failed", { cause: failure });
  }
}

/** Rethrows `err` with the changes made before it, so they survive to the end of the turn. */
export function failWith(changes: readonly Change[], err: unknown): never {
  if (err instanceof StepFailure) throw new StepFailure([...changes, ...err.changes], err.failure);
  throw new StepFailure(changes, err);
}

/**
 * Steps in order, each on the context the passes before it left; the first that
 * handles the event ends the chain. When all pass, the chain passes with what they
 * contributed (grammY's `concat`/`flatten`).
 */
export function chain(...steps: Step[]): Step {
  return async (ctx) => {
    const carried: Change[] = [];
    let current = ctx;
    for (const step of steps) {
      let result: StepResult;
      try {
        result = await step(current);
      } catch (err) {
        failWith(carried, err);
      }
      if (!isPass(result)) return [...carried, ...result];
      if (result.pass.length === 0) continue;
      carried.push(...result.pass);
      current = current.after(result.pass);
    }
    return pass(carried);
  };
}

/** A step for the turns `applies` picks; any other turn passes (grammY's `filter`). */
export function when(applies: (ctx: TurnContext) => boolean, step: Step): Step {
  return (ctx) => (applies(ctx) ? step(ctx) : pass());
}

/** A step for one kind of event, given the event narrowed to that kind (grammY's `on`). */
export function on<K extends InboundEvent["kind"]>(
  kind: K,
  step: (ctx: TurnContext, event: Extract<InboundEvent, { kind: K }>) => StepResult | Promise<StepResult>,
): Step {
  return (ctx) =>
    ctx.event.kind === kind ? step(ctx, ctx.event as Extract<InboundEvent, { kind: K }>) : pass();
}

/** Runs a step as a whole turn: what a final pass contributed is all that happens. */
export async function run(step: Step, ctx: TurnContext): Promise<readonly Change[]> {
  const result = await step(ctx);
  return isPass(result) ? result.pass : result;
}

/**
 * `first`, then what `next` makes of the context they leave: for a step that changes
 * something and goes on (enable a tool, then call it). A failure in `next` keeps `first`.
 */
export async function andThen(
  ctx: TurnContext,
  first: readonly Change[],
  next: (ctx: TurnContext) => Promise<readonly Change[]>,
): Promise<Change[]> {
  try {
    return [...first, ...(await next(first.length > 0 ? ctx.after(first) : ctx))];
  } catch (err) {
    failWith(first, err);
  }
}
