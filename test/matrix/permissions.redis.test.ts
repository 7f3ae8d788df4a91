import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { createMatrixPlatform } from "../../src/matrix/matrix-platform.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { AuditLog } from "../../src/sessions/audit-log.js";
import { PairingCodes } from "../../src/sessions/pairing-codes.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { FAST_RETRY } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { teamNamespace } from "../support/team.js";
import { eventually } from "../support/wait.js";

const team = teamNamespace();
let hs: MatrixHomeserverStandin;
let db: TestRedis;
let runtime: Runtime;
let bot: string;
let alice: string;
let bob: string;
let carol: string;
let roomId: string;

beforeAll(async () => {
  hs = await MatrixHomeserverStandin.start();
  db = await testRedis();
  const botUser = hs.registerUser("perms");
  bot = botUser.userId;
  alice = hs.registerUser("alice").userId;
  bob = hs.registerUser("bob").userId;
  carol = hs.registerUser("carol").userId;
  roomId = hs.createRoom(alice, { name: "ops", members: [bot, bob, carol] });
  const config = ConfigSchema.parse({
    namespaces: { h: team.config },
    matrix: {
      homeserver: hs.url,
      accessToken: botUser.accessToken,
      rooms: [
        {
          room: roomId,
          name: "ops",
          namespace: "h",
          users: [alice, bob],
          callers: [alice],
          approvers: [bob],
          respond: "all",
        },
      ],
    },
  });
  const platform = createMatrixPlatform({ syncTimeoutMs: 300, retry: FAST_RETRY, typingRefreshMs: 200 });
  runtime = await startRuntime({
    config,
    redisUrl: db.url,
    prefix: db.prefix,
    log: silentLogger(),
    platforms: [platform],
  });
  await say(alice, "/tools");
}, 60_000);
afterAll(async () => {
  await runtime?.stop();
  await hs.close();
  await db.cleanup();
});

/** `from` says `text` in the room; resolves with the bodies of the bot's next `parts` messages. */
async function say(from: string, text: string, parts = 1): Promise<string> {
  const before = hs.sentBy(roomId, bot, "m.room.message").length;
  hs.sendText(roomId, from, text);
  await eventually(
    () => expect(hs.sentBy(roomId, bot, "m.room.message").length).toBeGreaterThanOrEqual(before + parts),
    30_000,
  );
  return hs
    .sentBy(roomId, bot, "m.room.message")
    .slice(before)
    .map((e) => String(e.content.body))
    .join("\n");
}

const wipes = () => team.calls().filter((c) => c.startsWith("h.wipe\t"));

describe("roles and pairing in a Matrix room (the runtime and the homeserver stand-in)", () => {
  it("callers, approvers: only the approver's yes runs Alice's destructive call, as Alice", async () => {
    expect(await say(bob, "/call h.slow")).toContain("Only this room's callers may use /call");
    expect(await say(alice, "/call h.wipe target=db1")).toContain("approve");
    expect(await say(alice, "yes")).not.toContain("WIPED");
    expect(wipes()).toEqual([]);
    expect(await say(bob, "yes")).toContain(`WIPED db1 as ${alice}`);
    expect(wipes()).toHaveLength(1);
  });

  it("a stranger pairs with a one-time code sent in the room, and is then answered; the trail says so", async () => {
    expect(await say(carol, "hello")).toContain("not allowed");
    const { code } = await new PairingCodes(db.redis, db.keys).create("ops", "operator:test");
    expect(await say(carol, `/pair ${code}`)).toContain("Paired");
    expect(await say(carol, "hello")).toContain("pong: hello");
    expect(await say(carol, `/pair ${code}`)).toContain("not valid");
    const trail = [];
    for await (const e of new AuditLog(db.redis, db.keys, 3600_000).since(0)) trail.push(e);
    expect(trail.find((e) => e.type === "pairing.added")).toMatchObject({
      binding: "ops",
      user: `${carol}`,
    });
    expect(trail.find((e) => e.type === "approval.granted")).toMatchObject({
      binding: "ops",
      by: `${bob}`,
      requester: `${alice}`,
      tool: "h.wipe",
    });
  });
});
