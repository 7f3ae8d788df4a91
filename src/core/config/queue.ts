import { z } from "zod";
import { fromMilliseconds, RENAMED_TO_SECONDS } from "./renamed-keys.js";

/** How many shards a deployment may have (each needs its own slot range). */
export const MAX_SHARDS = 1024;

/** The default number of shards: several per master of a small cluster. */
export const DEFAULT_SHARDS = 12;

/** The `queue` section: leases, delivery deadlines and retries of the room scheduler. */
export const QueueSchema = z
  .preprocess(
    fromMilliseconds(RENAMED_TO_SECONDS.queue),
    z.strictObject({
      /** A dead worker's rooms are taken over this long after its last lease renewal. */
      leaseSeconds: z.number().positive().default(10),
      /** A turn still undeliverable this long after its first wait goes to the dead letters. */
      deliveryDeadlineSeconds: z.number().positive().default(3600),
      /** The longest sleep between delivery retries (backoff doubles from 0.5 s up to this, jittered). */
      retryMaxSeconds: z.number().positive().default(10),
      /** How long a platform event id is remembered, so a redelivered event is not answered twice. */
      dedupeSeconds: z
        .number()
        .int()
        .positive()
        .default(6 * 3600),
      /** Typing is shown only for turns that run longer than this many seconds. */
      typingAfterSeconds: z.number().nonnegative().default(1),
      /**
       * How many shards rooms are spread over (each a Redis Cluster slot of its own); fixed
       * for a key prefix once used, since a room's keys live in its shard.
       */
      shards: z.number().int().min(1).max(MAX_SHARDS).default(DEFAULT_SHARDS),
      /**
       * A turn whose computation was cut short by its worker process dying this many times
       * goes to the dead letters instead of running again (it may be what kills it).
       */
      maxComputeDeaths: z.number().int().positive().default(3),
      /**
       * A call waiting for a /cancel or an answer is woken by a signal when one is queued;
       * it also re-reads the room's queue this often, in case a signal was lost (a
       * reconnect, a Cluster node change).
       */
      recheckSeconds: z.number().positive().default(5),
    }),
  )
  .prefault({});
