import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeRecoveryKey } from "matrix-js-sdk/lib/crypto-api/recovery-key.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runsAnswer } from "../support/matrix-fixtures.js";
import { publicKeyOf, signedBy, type Signed } from "../support/matrix-standin-signing.js";
import { registerWithSharedSecret, type SynapseUser } from "../support/matrix-synapse-client.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { demoNamespaces } from "../support/spine.js";
import { waitFor } from "../support/wait.js";
import { ElementHuman, type ElementEvent } from "./element-human.js";
import { LEASE_SECONDS, loginAsNewDevice, STORE_KEY } from "./e2ee-world.js";

const homeserver = process.env.SYNAPSE_URL;
const sharedSecret = process.env.SYNAPSE_SHARED_SECRET;
const RECOVERY_KEY = encodeRecoveryKey(randomBytes(32))!;
const IDENTITY_CHANGED = "encryption identity changed since this bot last saw it";

type KeysQuery = {
  master_keys?: Record<string, Signed>;
  self_signing_keys?: Record<string, Signed>;
  device_keys?: Record<string, Record<string, Signed>>;
};

/**
 * The chain Element checks, read from the homeserver's `/keys/query` and checked here
 * (not by asking roomgate): the device is signed by the account's self-signing key, which
 * is signed by its master key. Resolves to the master key.
 */
async function crossSignedChain(asker: SynapseUser, userId: string, deviceId: string): Promise<string> {
  const answer = (await asker.request("POST", "/_matrix/client/v3/keys/query", {
    device_keys: { [userId]: [] },
  })) as KeysQuery;
  const master = answer.master_keys?.[userId];
  const selfSigning = answer.self_signing_keys?.[userId];
  const device = answer.device_keys?.[userId]?.[deviceId];
  expect(master?.usage).toEqual(["master"]);
  expect(selfSigning?.usage).toEqual(["self_signing"]);
  expect(device).toBeTruthy();
  const masterKey = publicKeyOf(master!);
  const selfSigningKey = publicKeyOf(selfSigning!);
  expect(signedBy(selfSigning!, userId, masterKey, masterKey)).toBe(true);
  expect(signedBy(device!, userId, selfSigningKey, selfSigningKey)).toBe(true);
  return masterKey;
}

/**
 * The person Element's "exclude insecure devices" makes of everyone, on a real Synapse:
 * matrix-js-sdk with the Rust crypto, her own device cross-signed, in
 * OnlySignedDevicesIsolationMode. roomgate (matrix.trust: cross-signed, the default, and a
 * recovery key) must be a device she talks to through its whole life: first start,
 * verification by the operator's emoji, kill -9 and takeover, a restart with nothing
 * local, a lost store recovered with the recovery key; and it must refuse her once her
 * pinned identity changes.
 */
describe.skipIf(!homeserver || !sharedSecret)(
  "the bot as Element's strict client sees it, on a real Synapse",
  () => {
    let redis: TestRedis;
    let botAccount: SynapseUser;
    let aliceAccount: SynapseUser;
    let alice: ElementHuman;
    let bob: ElementHuman;
    let ops: string;
    let shared: string;
    let config: Record<string, unknown>;
    let botDevice: string;
    let token: string;
    let owner: RoomgateProcess;
    let master: string;
    const processes: RoomgateProcess[] = [];
    const humans: ElementHuman[] = [];
    let bot: string;

    const secrets = () => ({
      MATRIX_TOKEN: token,
      MATRIX_STORE_KEY: STORE_KEY,
      MATRIX_RECOVERY_KEY: RECOVERY_KEY,
    });
    const startBot = (env: Record<string, string> = {}) => {
      const p = RoomgateProcess.start(config, { ...secrets(), LOG_LEVEL: "info", ...env });
      processes.push(p);
      return p;
    };
    const syncing = (p: RoomgateProcess) =>
      waitFor(() => p.output.includes("matrix receiver syncing"), 60_000, "the bot to sync");
    /** The bot's answer to `eventId`, as `reader` shows it (decrypted, or the test fails naming what it saw). */
    const answerTo = async (
      reader: ElementHuman,
      eventId: string,
      timeoutMs = 45_000,
      room = ops,
    ): Promise<ElementEvent> => {
      try {
        return await reader.waitFor(room, (e) => e.sender === bot && e.inReplyTo === eventId, timeoutMs);
      } catch (err) {
        const seen = (await reader.events(room)).filter((e) => e.sender === bot);
        const log = owner.output.split("\n").slice(-40).join("\n");
        throw new Error(
          `no decrypted answer to ${eventId}; the bot's events: ${JSON.stringify(seen)}\nthe bot's last log lines:\n${log}`,
          { cause: err },
        );
      }
    };
    const expectRunsAnswer = (answer: ElementEvent) =>
      expect(answer.body).toContain(runsAnswer("runs.list").answer);

    beforeAll(async () => {
      redis = await testRedis();
      botAccount = await registerWithSharedSecret(homeserver!, sharedSecret!, "roomgate");
      aliceAccount = await registerWithSharedSecret(homeserver!, sharedSecret!, "alice");
      bot = botAccount.userId;
      token = botAccount.accessToken;
      botDevice = (
        (await botAccount.request("GET", "/_matrix/client/v3/account/whoami")) as { device_id: string }
      ).device_id;
      alice = await ElementHuman.login(
        homeserver!,
        aliceAccount.userId,
        aliceAccount.password,
        "alice-element",
      );
      humans.push(alice);
      const bobAccount = await registerWithSharedSecret(homeserver!, sharedSecret!, "bob");
      bob = await ElementHuman.login(homeserver!, bobAccount.userId, bobAccount.password, "bob-element");
      humans.push(bob);
      ops = await alice.createEncryptedRoom("ops (strict)");
      await alice.invite(ops, bob.userId);
      await bob.join(ops);
      shared = await alice.createEncryptedRoom("history (shared on invite)");
      const demo = demoNamespaces({}, ["runs"]);
      config = {
        redis: { url: redis.url, prefix: redis.prefix },
        namespaces: demo.config.namespaces,
        matrix: {
          homeserver,
          accessToken: "${MATRIX_TOKEN}",
          storeKey: "${MATRIX_STORE_KEY}",
          recoveryKey: "${MATRIX_RECOVERY_KEY}",
          encryption: "required",
          deviceLeaseSeconds: LEASE_SECONDS,
          rooms: [
            { room: ops, namespace: "runs", users: [alice.userId, bob.userId], respond: "all" },
            { room: shared, namespace: "runs", users: [alice.userId], respond: "all" },
          ],
        },
      };
      owner = startBot();
    });
    afterAll(async () => {
      for (const p of processes) p.kill();
      const logs = process.env.ROOMGATE_E2E_LOGS;
      if (logs) processes.forEach((p, i) => writeFileSync(join(logs, `element-roomgate-${i}.log`), p.output));
      for (const h of humans) await h.close();
      await redis?.cleanup();
    });

    it("cross-signs its device at first start: the chain device ← self-signing ← master holds on the server", async () => {
      await syncing(owner);
      expect(owner.output).toContain("created the bot's cross-signing identity");
      master = await crossSignedChain(aliceAccount, bot, botDevice);
      await alice.invite(ops, bot);
      await waitFor(
        async () => (await aliceAccount.membership(ops, bot)) === "join",
        30_000,
        "the bot to join",
      );
    });

    it("answers her encrypted question; she decrypts it with no shield: the bot's device is cross-signed by its owner", async () => {
      const asked = await alice.say(ops, "what runs do I have?");
      const answer = await answerTo(alice, asked);
      expectRunsAnswer(answer);
      expect(answer.decrypted).toBe(true);
      expect(answer.deviceId).toBe(botDevice);
      expect(answer.shield).toBe("none");
      const status = await alice.crypto.getDeviceVerificationStatus(bot, botDevice);
      expect(status?.signedByOwner).toBe(true);
    });

    it("joins another room on her invite and takes the room keys her client shares with it (MSC4268)", async () => {
      // Written before the invite: only alice's own devices have its room key.
      await alice.say(shared, "written before the bot was invited");
      // matrix-js-sdk 43 uploads a bundle of the room's keys and sends its details to the bot's devices, then invites.
      await alice.invite(shared, bot);
      const took = await waitFor(
        () => owner.output.split("\n").find((l) => l.includes("took the inviter's room-key bundle")),
        30_000,
        "the bot to take her room-key bundle",
      );
      expect(Number(/"keys":(\d+)/.exec(took)?.[1])).toBeGreaterThan(0);
      expect(took).toContain(shared);
      const answer = await answerTo(alice, await alice.say(shared, "what runs do I have?"), 45_000, shared);
      expectRunsAnswer(answer);
    });

    /**
     * `who` verifies the bot from her client while the operator runs `roomgate matrix
     * verify`, compares the emoji it prints with hers and answers y only when they match.
     */
    async function verifiedWithOperator(
      who: ElementHuman,
      via: { roomId: string } | { deviceId: string },
    ): Promise<void> {
      const cli = spawn(
        process.execPath,
        ["bin/roomgate", "matrix", "verify", "-c", owner.configFile, "--wait", "90"],
        { env: { ...process.env, ...secrets() }, stdio: ["pipe", "pipe", "pipe"] },
      );
      let shown = "";
      cli.stdout.on("data", (chunk: Buffer) => (shown += chunk.toString()));
      cli.stderr.on("data", (chunk: Buffer) => (shown += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => cli.once("exit", resolve));
      try {
        await who.verifyUser(bot, via, async (emoji) => {
          const line = await waitFor(
            () => shown.split("\n").find((l) => l.includes(emoji[0]!)),
            60_000,
            "the operator's emoji",
          );
          const same = line.trim() === emoji.join("   ");
          cli.stdin.write(same ? "y\n" : "n\n");
          return same;
        });
        expect(await exited).toBe(0);
      } catch (err) {
        const log = owner.output.split("\n").slice(-30).join("\n");
        throw new Error(`verification failed; the CLI said:\n${shown}\nthe bot's last log lines:\n${log}`, {
          cause: err,
        });
      } finally {
        if (cli.exitCode === null) cli.kill("SIGKILL");
      }
      expect(shown).toContain("Verified:");
      expect((await who.crypto.getUserVerificationStatus(bot)).isCrossSigningVerified()).toBe(true);
      const answer = await answerTo(who, await who.say(ops, "what runs do I have?"));
      expectRunsAnswer(answer);
      expect(answer.shield).toBe("none");
      expect((await who.crypto.getDeviceVerificationStatus(bot, botDevice))?.crossSigningVerified).toBe(true);
    }

    it("is verified from her side (Element's 'Verify session', to-device) with the emoji the operator confirms in `roomgate matrix verify`", async () => {
      await verifiedWithOperator(alice, { deviceId: botDevice });
    });

    it("is verified from his side (Element's 'Verify user', in the room) the same way", async () => {
      await verifiedWithOperator(bob, { roomId: ops });
    });

    it("after kill -9 of the owner, the standby takes the device over and she still reads it as verified", async () => {
      const standby = startBot();
      await waitFor(() => standby.output.includes("standing by"), 60_000, "the standby");
      owner.child.kill("SIGKILL");
      const asked = await alice.say(ops, "what runs do I have?");
      await waitFor(
        () => standby.output.includes("this process owns the device"),
        (LEASE_SECONDS + 20) * 1000,
        "the takeover",
      );
      owner = standby;
      const answer = await answerTo(alice, asked);
      expectRunsAnswer(answer);
      expect(answer.deviceId).toBe(botDevice);
      expect(answer.shield).toBe("none");
      expect(await crossSignedChain(aliceAccount, bot, botDevice)).toBe(master);
      expect((await alice.crypto.getUserVerificationStatus(bot)).isCrossSigningVerified()).toBe(true);
    });

    it("restarted with an empty state folder, keeps the same master key: no identity change for her", async () => {
      expect(await owner.stop()).toBe(0);
      owner = startBot({ ROOMGATE_STATE_DIR: mkdtempSync(join(tmpdir(), "roomgate-empty-state-")) });
      await syncing(owner);
      expect(owner.output).not.toContain("created the bot's cross-signing identity");
      expect(await crossSignedChain(aliceAccount, bot, botDevice)).toBe(master);
      const answer = await answerTo(alice, await alice.say(ops, "what runs do I have?"));
      expectRunsAnswer(answer);
      expect(answer.shield).toBe("none");
      const status = await alice.crypto.getUserVerificationStatus(bot);
      expect(status.isCrossSigningVerified()).toBe(true);
      expect(status.needsUserApproval).toBe(false);
    });

    it("after a lost store, the recovery key gives a new cross-signed device that answers what was asked meanwhile from the key backup", async () => {
      expect(await owner.stop()).toBe(0);
      // Asked while the bot is down, in her session whose key the old device backed up.
      const asked = await alice.say(ops, "what runs do I have? (asked while the store is lost)");
      await redis.redis.del(redis.keys.matrixDevice(bot, botDevice, "store"));
      const login = await loginAsNewDevice(botAccount, "roomgate (recovered)");
      token = login.token;
      owner = startBot();
      await syncing(owner);
      expect(owner.output).toContain("cross-signing keys restored from secret storage");
      expect(await crossSignedChain(aliceAccount, bot, login.deviceId)).toBe(master);
      const answer = await answerTo(alice, asked, 60_000);
      expectRunsAnswer(answer);
      expect(answer.deviceId).toBe(login.deviceId);
      expect(answer.shield).toBe("none");
      expect((await alice.crypto.getUserVerificationStatus(bot)).isCrossSigningVerified()).toBe(true);
      botDevice = login.deviceId;
    });

    it("refuses her once her pinned identity changed, tells the room once, and answers her again after `roomgate matrix trust`", async () => {
      // Someone replaces alice's cross-signing identity (a new login that resets it, with her password).
      const phone = await ElementHuman.login(
        homeserver!,
        aliceAccount.userId,
        aliceAccount.password,
        "alice-phone",
        { newIdentity: true },
      );
      humans.push(phone);
      await phone.hasRoom(ops);
      const changed = await phone.say(ops, "what runs do I have? (a new identity)");
      // Bob, in the room, reads the bot's one notice; the changed identity gets no answer.
      const notice = await answerTo(bob, changed);
      expect(notice.body).toContain(IDENTITY_CHANGED);
      const again = await phone.say(ops, "what runs do I have? (still the new identity)");
      const barrier = await answerTo(bob, await bob.say(ops, "what runs do I have?"));
      expectRunsAnswer(barrier);
      const toPhone = (await bob.events(ops)).filter(
        (e) => e.sender === bot && (e.inReplyTo === changed || e.inReplyTo === again),
      );
      expect(toPhone.map((e) => e.body)).toEqual([notice.body]);
      expect(owner.output).toContain("a person's identity changed since it was pinned");

      const trust = spawn(
        process.execPath,
        ["bin/roomgate", "matrix", "trust", aliceAccount.userId, "-c", owner.configFile],
        { env: { ...process.env, ...secrets() }, stdio: ["ignore", "pipe", "pipe"] },
      );
      expect(await new Promise((resolve) => trust.once("exit", resolve))).toBe(0);
      const answer = await answerTo(phone, await phone.say(ops, "what runs do I have? (approved)"), 60_000);
      expectRunsAnswer(answer);
      expect(answer.shield).toBe("none");
    });

    it("leaves no store key or recovery key in any output", () => {
      for (const p of processes) {
        expect(p.output).not.toContain(STORE_KEY);
        expect(p.output).not.toContain(RECOVERY_KEY);
      }
    });
  },
);
