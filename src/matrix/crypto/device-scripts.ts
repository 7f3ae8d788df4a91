import { z } from "zod";
import type { RedisClient } from "../../sessions/redis-connection.js";
import { declareScript, runScript } from "../../scheduler/lua-script.js";

const lua = (file: string) => new URL(`../lua/${file}.lua`, import.meta.url);
const Held = z.object({ held: z.boolean() });
const Lease = z.object({ token: z.string(), leaseMs: z.number() });

/** The device lease's documented Lua scripts (src/matrix/lua), each declared once. */
const SCRIPTS = {
  acquire: declareScript({ file: lua("acquire-device"), keys: ["lease"], args: Lease, reply: Held }),
  renew: declareScript({ file: lua("renew-device"), keys: ["lease"], args: Lease, reply: Held }),
  release: declareScript({
    file: lua("release-device"),
    keys: ["lease"],
    args: z.object({ token: z.string() }),
    reply: Held,
  }),
  write: declareScript({
    file: lua("write-device"),
    keys: ["lease", "store"],
    args: z.object({ token: z.string(), remove: z.array(z.string()), fields: z.array(z.string()) }),
    reply: z.object({ result: z.enum(["written", "new", "lost"]) }),
    blobs: "values",
  }),
};

/** The device lease's scripts as typed calls, each fenced by the lease's token. */
export class DeviceScripts {
  constructor(private readonly redis: RedisClient) {}

  /** Takes the lease when nobody holds it (or extends it for its holder); true when the caller holds it now. */
  async acquire(lease: string, token: string, leaseMs: number): Promise<boolean> {
    return (await runScript(this.redis, SCRIPTS.acquire, { lease }, { token, leaseMs })).held;
  }

  /** Extends the caller's lease; false when it does not hold it (an expired lease is not renewed). */
  async renew(lease: string, token: string, leaseMs: number): Promise<boolean> {
    return (await runScript(this.redis, SCRIPTS.renew, { lease }, { token, leaseMs })).held;
  }

  /** Gives the caller's lease up; false when it did not hold it. */
  async release(lease: string, token: string): Promise<boolean> {
    return (await runScript(this.redis, SCRIPTS.release, { lease }, { token })).held;
  }

  /**
   * Writes `fields` (name → bytes) into the store and removes `remove`, fenced by the
   * lease: "lost" (nothing written) when the caller does not hold it, "new" when the
   * store had no metadata before.
   */
  async write(
    keys: { lease: string; store: string },
    token: string,
    remove: string[],
    fields: [string, string | Buffer][],
  ): Promise<"written" | "new" | "lost"> {
    const reply = await runScript(
      this.redis,
      SCRIPTS.write,
      keys,
      { token, remove, fields: fields.map(([f]) => f) },
      { blobs: fields.map(([, value]) => value) },
    );
    return reply.result;
  }
}
