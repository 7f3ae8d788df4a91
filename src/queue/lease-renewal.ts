import type { Logger } from "../core/log.js";
import type { RoomLease } from "./room-lease.js";
import type { SchedulerScripts } from "./scheduler-scripts.js";

/**
 * Renews a process's held leases together, one call per lane and shard (no command
 * spans two shards); a lease Redis no longer confirms is marked lost, so that its turn
 * stops before any further side effect. A failed call leaves the leases as they are:
 * each is lost on its own once unconfirmed for its length (RoomLease).
 */
export async function renewLeases(
  scripts: SchedulerScripts,
  held: RoomLease[],
  leaseMs: number,
  log: Logger,
): Promise<void> {
  const groups = new Map<string, RoomLease[]>();
  for (const lease of held) {
    if (!lease.active) continue;
    const key = `${lease.shard} ${lease.lane}`;
    groups.set(key, [...(groups.get(key) ?? []), lease]);
  }
  await Promise.all(
    [...groups.values()].map(async (leases) => {
      const { lane, shard } = leases[0]!;
      const sent = Date.now();
      try {
        const renewed = await scripts.renew({ lane, shard, leases, leaseMs });
        leases.forEach((lease, i) => {
          if (renewed[i]) lease.confirm(sent);
          else if (!lease.lost) {
            lease.markLost();
            log.warn({ room: lease.room }, "room lease lost; its turn stops before any further side effect");
          }
        });
      } catch (err) {
        log.warn({ err: (err as Error).message, lane }, "lease renewal failed");
      }
    }),
  );
}
