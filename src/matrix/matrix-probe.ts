import { z } from "zod";
import type { MatrixConfig } from "../core/config.js";
import { networkReason, note, ok, problem, type Diagnosis } from "../core/diagnosis.js";
import { printable } from "../core/printable.js";

/** How long one homeserver request of the doctor may take. */
const PROBE_TIMEOUT_MS = 10_000;

const WhoamiSchema = z.object({ user_id: z.string(), device_id: z.string().optional() });
const KeysSchema = z.object({
  device_keys: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
  master_keys: z.record(z.string(), z.unknown()).default({}),
});
const ErrorSchema = z.object({ errcode: z.string(), error: z.string().optional() });

/** A homeserver request, its JSON answer, or the status and Matrix error it failed with. */
async function request(
  config: MatrixConfig,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(new URL(path, config.homeserver), {
    method,
    headers: { authorization: `Bearer ${config.accessToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  });
  return { status: res.status, json: await res.json().catch(() => undefined) };
}

function refused(status: number, json: unknown): string {
  const e = ErrorSchema.safeParse(json);
  return e.success
    ? `${status} ${e.data.errcode}${e.data.error ? `: ${printable(e.data.error)}` : ""}`
    : String(status);
}

/**
 * What `roomgate doctor` finds about the Matrix section: whether the homeserver can be
 * reached (a DNS failure said as such), whether it accepts the access token (whoami:
 * the bot's user and device), and, with encryption, whether the device has published
 * its keys and the account its cross-signing identity.
 */
export async function probeMatrix(config: MatrixConfig): Promise<Diagnosis[]> {
  const host = new URL(config.homeserver).host;
  let who;
  try {
    who = await request(config, "GET", "/_matrix/client/v3/account/whoami");
  } catch (err) {
    const reason = networkReason(err, host) ?? (err as Error).message;
    return [
      problem(
        `matrix homeserver ${host}: not reachable: ${reason}`,
        "check matrix.homeserver and this machine's DNS and network",
      ),
    ];
  }
  if (who.status === 401 || who.status === 403) {
    return [
      problem(
        `matrix homeserver ${host}: the access token was refused (${refused(who.status, who.json)})`,
        "log the bot in again and put the new access_token in the variable matrix.accessToken names (docs/matrix.md)",
      ),
    ];
  }
  const me = WhoamiSchema.safeParse(who.json);
  if (who.status !== 200 || !me.success) {
    return [
      problem(
        `matrix homeserver ${host}: whoami answered ${refused(who.status, who.json)}`,
        "check matrix.homeserver: it should be the client API's base URL",
      ),
    ];
  }
  const user = printable(me.data.user_id);
  const device = me.data.device_id;
  const found: Diagnosis[] = [
    ok(
      `matrix ${user} on ${host}: the access token is accepted${device ? `, device ${printable(device)}` : ""}`,
    ),
  ];
  if (config.encryption === "off") return found;
  if (!config.storeKey) {
    found.push(
      problem(
        `matrix ${user}: encryption is ${config.encryption} but no matrix.storeKey is set, so encrypted rooms are not served`,
        "set storeKey: ${MATRIX_STORE_KEY} and MATRIX_STORE_KEY=$(openssl rand -base64 32) in .env",
      ),
    );
  }
  if (!device) return found;
  try {
    const keys = KeysSchema.safeParse(
      (
        await request(config, "POST", "/_matrix/client/v3/keys/query", {
          device_keys: { [me.data.user_id]: [device] },
        })
      ).json,
    );
    const published = keys.success && keys.data.device_keys[me.data.user_id]?.[device] !== undefined;
    const crossSigned = keys.success && keys.data.master_keys[me.data.user_id] !== undefined;
    found.push(
      note(
        `matrix ${user}: device ${printable(device)} ${published ? "has published its keys" : "has published no keys yet (start publishes them)"}; ` +
          `the account ${crossSigned ? "has" : "has no"} cross-signing identity`,
      ),
    );
  } catch (err) {
    found.push(
      note(
        `matrix ${user}: the device's keys could not be queried (${networkReason(err, host) ?? (err as Error).message})`,
      ),
    );
  }
  return found;
}
