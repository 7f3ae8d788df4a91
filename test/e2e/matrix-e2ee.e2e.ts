import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHOSEN_MARK } from "../../src/matrix/matrix-sender.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import { EVERYTHING_COMMAND } from "../support/everything.js";
import { runsAnswer } from "../support/matrix-fixtures.js";
import { registerWithSharedSecret, type SynapseUser } from "../support/matrix-synapse-client.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { NioHuman, type HumanEvent } from "./nio-human.js";

const homeserver = process.env.SYNAPSE_URL;
const sharedSecret = process.env.SYNAPSE_SHARED_SECRET;
const LEASE_SECONDS = 4;
const STORE_KEY = "e2e store key: long enough, never logged";

/**
 * End-to-end encrypted operator rooms on a real Synapse (scripts/synapse-e2e.sh), the
 * bot run as `roomgate start -c config.yaml` processes and the person an independent
 * E2EE client (matrix-nio with libolm, nio_human.py): everything both sides send is
 * `m.room.encrypted` on the server, the device survives a restart and a kill -9 (a
 * standby takes it over), late keys and rotated sessions are read, and a stranger in the
 * room cannot read the bot's answers to others.
 */
describe.skipIf(!homeserver || !sharedSecret)(
  "encrypted rooms on a real Synapse with an independent E2EE client",
  () => {
    let redis: TestRedis;
    let bot: SynapseUser;
    let admin: SynapseUser;
    let aliceAccount: SynapseUser;
    let alice: NioHuman;
    let mallory: NioHuman;
    let botDevice: string;
    let ops: string;
    let tools: string;
    let callLog: string;
    let config: Record<string, unknown>;
    const processes: RoomgateProcess[] = [];
    let owner: RoomgateProcess;

    const startBot = (): RoomgateProcess => {
      const p = RoomgateProcess.start(config, {
        MATRIX_TOKEN: bot.accessToken,
        MATRIX_STORE_KEY: STORE_KEY,
        LOG_LEVEL: "info",
      });
      processes.push(p);
      return p;
    };

    beforeAll(async () => {
      redis = await testRedis();
      bot = await registerWithSharedSecret(homeserver!, sharedSecret!, "roomgate");
      admin = await registerWithSharedSecret(homeserver!, sharedSecret!, "admin", { admin: true });
      aliceAccount = await registerWithSharedSecret(homeserver!, sharedSecret!, "alice");
      const malloryAccount = await registerWithSharedSecret(homeserver!, sharedSecret!, "mallory");
      botDevice = ((await bot.request("GET", "/_matrix/client/v3/account/whoami")) as { device_id: string })
        .device_id;
      alice = await NioHuman.login(homeserver!, aliceAccount.userId, aliceAccount.password, "alice-laptop");
      mallory = await NioHuman.login(
        homeserver!,
        malloryAccount.userId,
        malloryAccount.password,
        "mallory-phone",
      );
      ops = await alice.createEncryptedRoom("ops (e2ee)");
      tools = await alice.createEncryptedRoom("tools (e2ee)");
      const demo = demoNamespaces({}, ["runs"]);
      callLog = demo.callLog;
      config = {
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
          rooms: [
            { room: ops, namespace: "runs", users: [alice.userId], respond: "all" },
            { room: tools, namespace: "everything", users: [alice.userId], respond: "all" },
          ],
        },
      };
      owner = startBot();
    });
    afterAll(async () => {
      for (const p of processes) p.kill();
      await alice?.close();
      await mallory?.close();
      await redis?.cleanup();
    });

    const calls = () => callsIn(callLog).map((line) => line.split("\t")[0]);
    const fromBot = (e: HumanEvent) => e.sender === bot.userId;
    /** The bot's answer to an event, as `reader` decrypts it. */
    const answerTo = (
      eventId: string,
      reader = alice,
      room = ops,
      except: string[] = [],
      timeoutMs = 30_000,
    ) =>
      reader.waitFor(
        room,
        (e) =>
          fromBot(e) &&
          e.type === "m.room.message" &&
          e.relates_to?.["m.in_reply_to"]?.event_id === eventId &&
          !except.includes(e.event_id),
        timeoutMs,
      );
    const reactionsOn = async (eventId: string) =>
      (await alice.events(ops))
        .filter((e) => fromBot(e) && e.type === "m.reaction" && e.relates_to?.event_id === eventId)
        .map((e) => e.relates_to?.key);
    /** The bot device's identity key, as the homeserver publishes it. */
    const botKey = async () => {
      const answer = (await aliceAccount.request("POST", "/_matrix/client/v3/keys/query", {
        device_keys: { [bot.userId]: [botDevice] },
      })) as { device_keys: Record<string, Record<string, { keys: Record<string, string> }>> };
      return answer.device_keys[bot.userId]?.[botDevice]?.keys[`curve25519:${botDevice}`];
    };

    it("joins the encrypted rooms on the allowed user's invite, its device keys published first", async () => {
      await expect.poll(() => owner.output, { timeout: 60_000 }).toContain("matrix receiver syncing");
      expect(await botKey()).toBeTruthy();
      await alice.invite(ops, bot.userId);
      await alice.invite(tools, bot.userId);
      await expect.poll(() => aliceAccount.membership(ops, bot.userId), { timeout: 30_000 }).toBe("join");
      await expect.poll(() => aliceAccount.membership(tools, bot.userId), { timeout: 30_000 }).toBe("join");
    });

    it("answers an encrypted question encrypted, verbatim with its caveat, and offers keycaps", async () => {
      const question = "which arm of my sweep won?";
      const expected = runsAnswer("runs.ask", { question });
      const answer = await answerTo(await alice.say(ops, question));
      expect(answer.decrypted).toBe(true);
      expect(answer.content.msgtype).toBe("m.notice");
      expect(String(answer.content.body)).toContain(expected.answer);
      expect(String(answer.content.body)).toContain(expected.caveat!);
      expect(String(answer.content.formatted_body)).toContain("<blockquote>");
    });

    it("takes a choice by an encrypted keycap reaction, and marks it chosen", async () => {
      const asked = await alice.say(ops, "hello there");
      const offer = await answerTo(asked);
      await expect.poll(() => reactionsOn(offer.event_id), { timeout: 30_000 }).toEqual(KEYCAPS.slice(0, 3));
      await alice.react(ops, offer.event_id, KEYCAPS[2]);
      const listed = await answerTo(asked, alice, ops, [offer.event_id]);
      expect(String(listed.content.body)).toContain(runsAnswer("runs.list").answer);
      await expect.poll(() => reactionsOn(offer.event_id), { timeout: 30_000 }).toContain(CHOSEN_MARK);
    });

    it("takes an encrypted file as the argument it asks for", async () => {
      const asked = await alice.say(ops, "are the numbers in my draft right?");
      const offer = await answerTo(asked);
      const prompt = await answerTo(await alice.say(ops, "1", offer.event_id));
      expect(String(prompt.content.body)).toContain("draft");
      const draft = "kd-0.5 reached 7.9 WER on eval-v1.\n";
      const checked = await answerTo(await alice.sendFile(ops, "draft.md", "text/markdown", draft));
      expect(String(checked.content.body)).toContain(runsAnswer("runs.claims_check", { draft }).answer);
    });

    it("edits its progress notice in place and sends an image, all encrypted", async () => {
      await answerTo(await alice.say(tools, "/tools"), alice, tools);
      const long = await alice.say(tools, "/call trigger-long-running-operation duration=4 steps=4");
      await answerTo(long, alice, tools, [], 60_000);
      await expect
        .poll(
          async () =>
            (await alice.events(tools)).filter(
              (e) => fromBot(e) && e.decrypted && e.relates_to?.rel_type === "m.replace",
            ).length,
          { timeout: 30_000 },
        )
        .toBeGreaterThanOrEqual(1);
      await alice.say(tools, "/call get-tiny-image");
      const image = await alice.waitFor(tools, (e) => fromBot(e) && e.content.msgtype === "m.image");
      expect(image.decrypted).toBe(true);
      expect(image.content.url).toBeUndefined();
      const png = await alice.download(image.content.file as Record<string, unknown>);
      expect(png.subarray(0, 4).toString("hex")).toBe("89504e47");
    });

    it("refuses a stranger in the room, who cannot decrypt the bot's answers to others", async () => {
      await alice.invite(ops, mallory.userId);
      await mallory.join(ops);
      const before = calls().length;
      const refusal = await answerTo(await mallory.say(ops, "which arm of my sweep won?"), mallory);
      expect(String(refusal.content.body)).toContain("not allowed");
      expect(calls()).toHaveLength(before);
      const question = await alice.say(ops, "what runs do I have?");
      const forAlice = await answerTo(question);
      expect(forAlice.decrypted).toBe(true);
      const seenByMallory = (await mallory.events(ops)).filter(
        (e) => fromBot(e) && e.type !== "m.room.member",
      );
      expect(seenByMallory.find((e) => e.event_id === forAlice.event_id)?.undecryptable).toBe(true);
      // Of everything the bot sent, mallory reads only what was addressed to her.
      expect(seenByMallory.filter((e) => e.decrypted).map((e) => e.event_id)).toEqual([refusal.event_id]);
    });

    it("keeps answering after the person's session rotates", async () => {
      const before = await alice.events(ops);
      await alice.rotate(ops);
      const asked = await alice.say(ops, "which arm of my sweep won?");
      await answerTo(asked);
      const raw = await admin.request(
        "GET",
        `/_synapse/admin/v1/rooms/${encodeURIComponent(ops)}/messages?dir=b&limit=50`,
      );
      const sessions = (raw as { chunk: { event_id: string; content: { session_id?: string } }[] }).chunk;
      const rotated = sessions.find((e) => e.event_id === asked)?.content.session_id;
      const earlier = before.filter((e) => e.sender === alice.userId).map((e) => e.event_id);
      const earlierSessions = new Set(
        sessions.filter((e) => earlier.includes(e.event_id)).map((e) => e.content.session_id),
      );
      expect(rotated).toBeTruthy();
      expect(earlierSessions.has(rotated)).toBe(false);
    });

    it("answers late, not never, a question whose room key arrives late", async () => {
      const asked = await alice.sayWithLateKey(ops, "what runs do I have?", bot.userId, botDevice);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(
        (await alice.events(ops)).some(
          (e) => fromBot(e) && e.relates_to?.["m.in_reply_to"]?.event_id === asked,
        ),
      ).toBe(false);
      await alice.deliverLateKey(asked);
      const answer = await answerTo(asked);
      expect(String(answer.content.body)).toContain(runsAnswer("runs.list").answer);
      expect(owner.output).toContain("room key not here yet; the event waits for it");
      expect(owner.output).toContain("late room key came; event decrypted");
    });

    it("restarts with its store kept: the same device, and it answers", async () => {
      const key = await botKey();
      expect(await owner.stop()).toBe(0);
      const whileDown = await alice.say(ops, "which arm of my sweep won?");
      owner = startBot();
      await expect.poll(() => owner.output, { timeout: 60_000 }).toContain("matrix receiver syncing");
      expect(owner.output).toContain("device keys loaded from Redis");
      expect(await botKey()).toBe(key);
      await answerTo(whileDown);
    });

    it("after kill -9 of the owner, a standby takes the device over within the lease + 2 s and answers", async () => {
      const key = await botKey();
      const standby = startBot();
      await expect.poll(() => standby.output, { timeout: 60_000 }).toContain("standing by to take it over");
      const killedAt = Date.now();
      owner.child.kill("SIGKILL");
      const asked = await alice.say(ops, "what runs do I have?");
      await expect
        .poll(() => standby.output, { timeout: (LEASE_SECONDS + 10) * 1000, interval: 50 })
        .toContain("this process owns the device");
      const tookOverMs = Date.now() - killedAt;
      console.log(`takeover after kill -9: ${tookOverMs} ms (lease ${LEASE_SECONDS} s)`);
      expect(tookOverMs).toBeLessThanOrEqual((LEASE_SECONDS + 2) * 1000);
      await answerTo(asked);
      expect(await botKey()).toBe(key);
      owner = standby;
    });

    it("leaves only m.room.encrypted events from both sides on the server", async () => {
      for (const room of [ops, tools]) {
        const raw = (await admin.request(
          "GET",
          `/_synapse/admin/v1/rooms/${encodeURIComponent(room)}/messages?dir=b&limit=1000`,
        )) as { chunk: { type: string; sender: string; state_key?: string }[] };
        const messages = raw.chunk.filter((e) => e.state_key === undefined);
        const senders = new Set(messages.map((e) => e.sender));
        expect(senders.has(bot.userId), room).toBe(true);
        expect(senders.has(alice.userId), room).toBe(true);
        expect(
          messages.filter((e) => e.type !== "m.room.encrypted"),
          room,
        ).toEqual([]);
      }
      for (const p of processes) expect(p.output).not.toContain(STORE_KEY);
    });
  },
);
