/**
 * The one way a test waits: for something the code promises (a message arriving, a log
 * line, a key appearing), checked every few milliseconds, failing with what it waited
 * for. The limit is generous on purpose: a wait that is met costs only its event, and a
 * shared 2-core box may be slow to deliver it. Never sleep a guessed time instead.
 */

/** How long a wait lasts unless told (below the 30 s test timeout, so the wait names what failed). */
export const WAIT_MS = 20_000;

/** How often a condition is checked. */
const EVERY_MS = 20;

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, EVERY_MS));

/** A wait that ran out: says what was awaited and for how long. */
export class WaitTimeout extends Error {
  constructor(what: string, ms: number, options?: ErrorOptions) {
    super(`timed out after ${ms} ms waiting for ${what}`, options);
    this.name = "WaitTimeout";
  }
}

/**
 * Resolves with the first value `check` returns other than `undefined` or `false`
 * (so it can both wait and hand back what it found).
 */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  ms = WAIT_MS,
  what = "the condition",
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new WaitTimeout(what, ms);
    await tick();
  }
}

/** Retries an assertion until it passes; past the limit, throws its last failure. */
export async function eventually<T>(assertion: () => T | Promise<T>, ms = WAIT_MS): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await assertion();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await tick();
    }
  }
}

/**
 * For a check that something does NOT happen, where no later event proves it would have
 * by now: watches `happened` for `ms` and fails as soon as it turns true. Prefer a
 * barrier (a later message that must come after it) where the code gives one.
 */
export async function staysFalse(
  happened: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + ms;
  do {
    if (await happened()) throw new Error(`${what} happened within ${ms} ms`);
    await tick();
  } while (Date.now() < deadline);
}

/**
 * Lets a duration pass that the scenario itself is made of (an outage, a window that must
 * lapse), never a guess at when something will have happened: what follows must then wait
 * for its own event. `why` names the duration so the remaining ones are easy to review.
 */
export async function elapse(ms: number, why: string): Promise<void> {
  void why;
  await new Promise<void>((resolve) => setTimeout(resolve, ms));
}
