import { z } from "zod";
import type { Config } from "../../core/config.js";
import { RoomgateError } from "../../core/errors.js";
import { IdentityApprovals } from "../../matrix/crypto/identity-approvals.js";
import { grouped, withMatrixCli } from "./matrix-cli.js";

const QuerySchema = z.looseObject({
  master_keys: z.record(z.string(), z.looseObject({ keys: z.record(z.string(), z.string()) })).default({}),
});

/**
 * `roomgate matrix trust <user>`: approves a person's current cross-signing identity
 * (the master key the homeserver publishes now) after it changed, so the bot answers
 * them again in encrypted rooms. The device's owner pins it when it next meets them,
 * and only if it is still that key.
 */
export async function runMatrixTrust(options: {
  config: Config;
  user: string;
  out?: NodeJS.WritableStream;
}): Promise<number> {
  const out = options.out ?? process.stdout;
  const { user } = options;
  if (!/^@[^:]+:.+$/.test(user))
    throw new RoomgateError(`"${user}" is not a Matrix user id (@alice:example.org)`);
  return withMatrixCli(options.config, async ({ call, redis, keys, userId }) => {
    const answer = QuerySchema.parse(
      await call("POST", "/_matrix/client/v3/keys/query", { device_keys: { [user]: [] } }),
    );
    const master = Object.values(answer.master_keys[user]?.keys ?? {})[0];
    if (!master) {
      out.write(`${user} has no cross-signing identity published; there is nothing to pin.\n`);
      return 1;
    }
    await new IdentityApprovals(redis, keys.matrixOperator(userId, "trust")).approve(user, master);
    out.write(
      [
        `${user}'s identity now (master key, compare it with theirs if you can):`,
        "",
        `  ${grouped(master)}`,
        "",
        `Approved: the bot pins it the next time ${user} writes, and answers them again in encrypted rooms.`,
        "",
      ].join("\n"),
    );
    return 0;
  });
}
