import { expect } from "vitest";
import { EVERYTHING_COMMAND } from "../support/everything.js";
import { registerWithSharedSecret, type SynapseUser } from "../support/matrix-synapse-client.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { demoNamespaces } from "../support/spine.js";
import { NioHuman, type HumanEvent } from "./nio-human.js";

/** The device lease of the bot in the encrypted e2e tests (takeover is measured against it). */
export const LEASE_SECONDS = 4;
/** MATRIX_STORE_KEY of the bot; no process output may contain it. */
export const STORE_KEY = "e2e store key: long enough, never logged";

/** What the encrypted e2e tests share: the bot's account, a person on nio, and their rooms. */
export interface E2eeWorld {
  homeserver: string;
  redis: TestRedis;
  bot: SynapseUser;
  admin: SynapseUser;
  aliceAccount: SynapseUser;
  alice: NioHuman;
  /** The bot's device at registration (the one its token belongs to). */
  botDevice: string;
  /** Encrypted rooms alice created, bound to `runs` (ops) and `everything` (tools). */
  ops: string;
  tools: string;
  callLog: string;
  config: Record<string, unknown>;
  processes: RoomgateProcess[];
  /** Starts `roomgate start` as the bot (with `token`, default the registration's; `storeKey`, default STORE_KEY). */
  startBot(options?: { token?: string; storeKey?: string }): RoomgateProcess;
  /** Invites the bot into every room and waits until it joined. */
  inviteBot(owner: RoomgateProcess): Promise<void>;
  close(): Promise<void>;
}

/**
 * Registers the bot, an admin and alice on the real Synapse, logs alice in on nio and
 * creates the encrypted rooms (tools with `rotation_period_msgs: toolsRotation`, so the
 * bot's own session rotation can be seen on the server).
 */
export async function e2eeWorld(
  homeserver: string,
  sharedSecret: string,
  toolsRotation?: number,
): Promise<E2eeWorld> {
  const redis = await testRedis();
  const bot = await registerWithSharedSecret(homeserver, sharedSecret, "roomgate");
  const admin = await registerWithSharedSecret(homeserver, sharedSecret, "admin", { admin: true });
  const aliceAccount = await registerWithSharedSecret(homeserver, sharedSecret, "alice");
  const botDevice = ((await bot.request("GET", "/_matrix/client/v3/account/whoami")) as { device_id: string })
    .device_id;
  const alice = await NioHuman.login(homeserver, aliceAccount.userId, aliceAccount.password, "alice-laptop");
  const ops = await alice.createEncryptedRoom("ops (e2ee)");
  const tools = await alice.createEncryptedRoom("tools (e2ee)", [], toolsRotation);
  const demo = demoNamespaces({}, ["runs"]);
  const config = {
    redis: { url: redis.url, prefix: redis.prefix },
    namespaces: {
      ...demo.config.namespaces,
      everything: { command: EVERYTHING_COMMAND, prefix: "", ask: false },
    },
    matrix: {
      homeserver,
      accessToken: "${MATRIX_TOKEN}",
      storeKey: "${MATRIX_STORE_KEY}",
      deviceLeaseSeconds: LEASE_SECONDS,
      // nio (libolm) has no cross-signing: a legacy client, to which the default (cross-signed) gives no room keys.
      trust: "all",
      rooms: [
        { room: ops, namespace: "runs", users: [alice.userId], respond: "all" },
        { room: tools, namespace: "everything", users: [alice.userId], respond: "all" },
      ],
    },
  };
  const processes: RoomgateProcess[] = [];
  return {
    homeserver,
    redis,
    bot,
    admin,
    aliceAccount,
    alice,
    botDevice,
    ops,
    tools,
    callLog: demo.callLog,
    config,
    processes,
    startBot: (options = {}) => {
      const p = RoomgateProcess.start(config, {
        MATRIX_TOKEN: options.token ?? bot.accessToken,
        MATRIX_STORE_KEY: options.storeKey ?? STORE_KEY,
        LOG_LEVEL: "info",
      });
      processes.push(p);
      return p;
    },
    inviteBot: async (owner) => {
      await expect.poll(() => owner.output, { timeout: 60_000 }).toContain("matrix receiver syncing");
      for (const room of [ops, tools]) await alice.invite(room, bot.userId);
      for (const room of [ops, tools])
        await expect.poll(() => aliceAccount.membership(room, bot.userId), { timeout: 30_000 }).toBe("join");
    },
    close: async () => {
      for (const p of processes) p.kill();
      await alice.close();
      await redis.cleanup();
    },
  };
}

/** The bot's answer to `eventId` in `room`, as `reader` decrypts it (none of `except`). */
export function answerTo(
  reader: NioHuman,
  bot: string,
  room: string,
  eventId: string,
  options: { except?: string[]; timeoutMs?: number } = {},
): Promise<HumanEvent> {
  return reader.waitFor(
    room,
    (e) =>
      e.sender === bot &&
      e.type === "m.room.message" &&
      e.relates_to?.["m.in_reply_to"]?.event_id === eventId &&
      !(options.except ?? []).includes(e.event_id),
    options.timeoutMs ?? 30_000,
  );
}

/** A device's keys as the homeserver publishes them (`/keys/query`), asked as `asker`. */
export async function publishedKeys(
  asker: SynapseUser,
  userId: string,
  deviceId: string,
): Promise<Record<string, string> | undefined> {
  const answer = (await asker.request("POST", "/_matrix/client/v3/keys/query", {
    device_keys: { [userId]: [deviceId] },
  })) as { device_keys: Record<string, Record<string, { keys: Record<string, string> }>> };
  return answer.device_keys[userId]?.[deviceId]?.keys;
}

/** The `ed25519` key a process logged when it took the device ("this process owns the device"). */
export function loggedSigningKey(p: RoomgateProcess): string | undefined {
  for (const line of p.output.split("\n")) {
    if (!line.includes("this process owns the device")) continue;
    return (JSON.parse(line) as { ed25519?: string }).ed25519;
  }
  return undefined;
}

/** Logs an account in again with its password: a new access token, which is a new device. */
export async function loginAsNewDevice(
  user: SynapseUser,
  deviceName: string,
): Promise<{ token: string; deviceId: string }> {
  const response = await fetch(`${user.homeserver}/_matrix/client/v3/login`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      type: "m.login.password",
      identifier: { type: "m.id.user", user: user.userId },
      password: user.password,
      initial_device_display_name: deviceName,
    }),
  });
  const body = (await response.json()) as { access_token?: string; device_id?: string };
  if (!response.ok || !body.access_token || !body.device_id)
    throw new Error(`login failed: ${JSON.stringify(body)}`);
  return { token: body.access_token, deviceId: body.device_id };
}

/** Every non-state event of the room as the server stores it (Synapse's admin API), oldest last. */
export async function serverView(
  admin: SynapseUser,
  room: string,
): Promise<{ event_id: string; type: string; sender: string; content: { session_id?: string } }[]> {
  const raw = (await admin.request(
    "GET",
    `/_synapse/admin/v1/rooms/${encodeURIComponent(room)}/messages?dir=b&limit=1000`,
  )) as {
    chunk: {
      event_id: string;
      type: string;
      sender: string;
      state_key?: string;
      content: { session_id?: string };
    }[];
  };
  return raw.chunk.filter((e) => e.state_key === undefined);
}
