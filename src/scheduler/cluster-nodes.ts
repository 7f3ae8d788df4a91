/**
 * Small readers for the window fallback (window-fallback.ts, group-mirror.ts): a call's
 * answer within a bound, and what `CLUSTER NODES` says of a slot's master.
 */

/** The promise's value, or undefined when it fails or takes longer than `ms` (it goes on unheeded). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  const settled = promise.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
    timer.unref();
  });
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether CLUSTER NODES (its text) shows the master owning `slot` flagged `fail` (not `fail?`). */
export function ownerFailed(text: string, slot: number): boolean {
  for (const line of text.split("\n")) {
    const fields = line.trim().split(" ");
    if (fields.length < 9) continue;
    const owns = fields.slice(8).some((range) => {
      if (range.startsWith("[")) return false;
      const [from, to] = range.split("-").map(Number);
      return from !== undefined && slot >= from && slot <= (to ?? from);
    });
    if (owns) return fields[2]!.split(",").includes("fail");
  }
  return false;
}
