import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { matrixRoom } from "../../src/core/room.js";
import { createMatrixPlatform } from "../../src/matrix/matrix-platform.js";
import { KEYCAPS, renderMatrix } from "../../src/render/matrix.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { echoAnswer, HOSTILE_ANSWERS, HOSTILE_ERROR_TEXT } from "../support/hostile/hostile-answers.js";
import { expectAnswerShown, hostileNamespace } from "../support/hostile/hostile-namespace.js";
import { replyOf, roomKeys } from "../support/hostile/room-state.js";
import { MatrixHomeserverStandin, type StandinEvent } from "../support/matrix-homeserver-standin.js";
import { FAST_RETRY } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { eventually } from "../support/wait.js";

const DAY = 24 * 3600_000;
const hostile = hostileNamespace();
let hs: MatrixHomeserverStandin;
let db: TestRedis;
let runtime: Runtime;
let start: () => Promise<Runtime>;
let bot: string;
let alice: string;
let ahead: string;
let behind: string;
let mallory: string;
let roomId: string;
let elsewhere: string;
let unbound: string;

const inReplyTo = (e: StandinEvent): string | undefined =>
  (e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.["m.in_reply_to"]
    ?.event_id;
/** The bot's notices that answer one event, in order. */
const answersTo = (eventId: string, room = roomId): StandinEvent[] =>
  hs.sentBy(room, bot, "m.room.message").filter((e) => inReplyTo(e) === eventId);

beforeAll(async () => {
  hs = await MatrixHomeserverStandin.start();
  db = await testRedis();
  const botUser = hs.registerUser("adv");
  bot = botUser.userId;
  alice = hs.registerUser("alice").userId;
  ahead = hs.registerUser("ahead").userId;
  behind = hs.registerUser("behind").userId;
  mallory = hs.registerUser("mallory").userId;
  roomId = hs.createRoom(alice, { name: "bound", members: [bot, ahead, behind, mallory] });
  elsewhere = hs.createRoom(mallory, { name: "elsewhere", members: [alice] });
  unbound = hs.createRoom(mallory, { name: "unbound", members: [bot] });
  hs.sendText(roomId, alice, "history from before the bot's first start");
  hs.rooms.clockSkew.set(ahead, DAY);
  hs.rooms.clockSkew.set(behind, -DAY);
  const config = ConfigSchema.parse({
    namespaces: { adv: hostile.config },
    matrix: {
      homeserver: hs.url,
      accessToken: botUser.accessToken,
      rooms: [
        { room: roomId, namespace: "adv", users: [alice, ahead, behind], respond: "all" },
        { room: elsewhere, namespace: "adv", users: [alice], respond: "all" },
      ],
    },
  });
  const platform = createMatrixPlatform({ syncTimeoutMs: 300, retry: FAST_RETRY, typingRefreshMs: 200 });
  start = () =>
    startRuntime({ config, redisUrl: db.url, prefix: db.prefix, log: silentLogger(), platforms: [platform] });
  runtime = await start();
}, 60_000);
afterAll(async () => {
  await runtime?.stop();
  await hs.close();
  await db.cleanup();
});

/** `from` sends `text`; resolves with the `parts` notices answering it. */
async function ask(
  text: string,
  parts = 1,
  from = alice,
  options: { replyTo?: string } = {},
): Promise<StandinEvent[]> {
  const asked = hs.sendText(roomId, from, text, options);
  await eventually(() => expect(answersTo(asked.event_id).length).toBeGreaterThanOrEqual(parts), 60_000);
  return answersTo(asked.event_id);
}

/** What the notices show: bodies joined, the caveat's `│ ` prefixes removed. */
const seen = (notices: StandinEvent[]): string =>
  notices.map((n) => String(n.content.body).replace(/^│ /gm, "")).join("\n");

describe("Matrix, through the real runtime and the homeserver stand-in, against a hostile namespace", () => {
  it("answers nothing from before its first start, and leaves a room no binding names with one notice", async () => {
    await eventually(() => expect(hs.membership(unbound, bot)).toBe("leave"));
    expect(hs.sentBy(unbound, bot, "m.room.message").map((e) => e.content.body)).toEqual([
      expect.stringContaining("not set up for this chat"),
    ]);
    expect(hostile.calls()).toEqual([]);
  });

  it.each(["markup", "caveat", "line", "emoji", "urls", "many", "longopts", "empty"])(
    "delivers the %s Answer whole, every event under the size limit",
    async (name) => {
      const answer = HOSTILE_ANSWERS[name]!;
      const parts = renderMatrix(replyOf(answer)).length;
      const notices = await ask(name, parts);
      expect(notices).toHaveLength(parts);
      expectAnswerShown(seen(notices), answer, { number: (i) => KEYCAPS[i] ?? `${i + 1}.` });
      for (const n of notices) {
        expect(n.content.msgtype).toBe("m.notice");
        expect(String(n.content.body).trim()).not.toBe("");
      }
    },
    90_000,
  );

  it("takes any number as a choice, and a reply to an older offer chooses from that offer", async () => {
    const [older] = await ask("longopts");
    await ask("many", renderMatrix(replyOf(HOSTILE_ANSWERS.many!)).length);
    const [viaReply] = await ask("3", 1, alice, { replyTo: older!.event_id });
    expect(viaReply!.content.body).toBe(echoAnswer(HOSTILE_ANSWERS.longopts!.options[2]!).answer);
    const [thousand] = await ask("1000");
    expect(thousand!.content.body).toBe(echoAnswer("option 1000").answer);
  }, 90_000);

  it("shows an error result verbatim as the agent's error, and a malformed one as malformed", async () => {
    const [error] = await ask("error");
    expect(error!.content.body).toContain('The "adv" agent reported an error');
    expect(error!.content.body).toContain(HOSTILE_ERROR_TEXT);
    const [malformed] = await ask("malformed");
    expect(malformed!.content.body).toMatch(/The "adv" agent sent a malformed reply/);
  }, 30_000);

  it("answers senders whose server clock is a day ahead or a day behind, in order, and replays nothing after a restart", async () => {
    const [first] = await ask("from alice");
    expect(first!.content.body).toBe(echoAnswer("from alice").answer);
    const [fromAhead] = await ask("from a day ahead", 1, ahead);
    expect(fromAhead!.content.body).toBe(echoAnswer("from a day ahead").answer);
    const [afterAhead] = await ask("alice after the skewed one");
    expect(afterAhead!.content.body).toBe(echoAnswer("alice after the skewed one").answer);
    const [fromBehind] = await ask("from a day behind", 1, behind);
    expect(fromBehind!.content.body).toBe(echoAnswer("from a day behind").answer);

    const calls = hostile.calls().length;
    await runtime.stop();
    const whileDown = hs.sendText(roomId, behind, "sent while the bot was down");
    runtime = await start();
    await eventually(() => expect(answersTo(whileDown.event_id)).toHaveLength(1), 30_000);
    const [fresh] = await ask("after the restart");
    expect(fresh!.content.body).toBe(echoAnswer("after the restart").answer);
    expect(
      hostile
        .calls()
        .slice(calls)
        .map((c) => JSON.parse(c.split("\t")[1]!).question),
    ).toEqual(["sent while the bot was down", "after the restart"]);
  }, 90_000);
});

describe("a Matrix stranger, every way in", () => {
  /** Nothing of the stranger's is left but the one-hour refusal mark; nothing downloaded or called. */
  async function expectNothingLeft(): Promise<void> {
    const keys = await roomKeys(db, matrixRoom(roomId));
    expect(keys.filter((k) => k.includes("mallory"))).toEqual(keys.filter((k) => k === `refused:${mallory}`));
    expect(hs.requests.filter((r) => r.path.includes("/media/"))).toEqual([]);
    expect(hostile.calls().filter((c) => c.includes("mallory"))).toEqual([]);
  }

  it("message, command, reply, reaction and file: one refusal notice, no turn, no download, no call", async () => {
    const calls = hostile.calls().length;
    const asked = hs.sendText(roomId, mallory, "what is new?");
    await eventually(() => expect(answersTo(asked.event_id)).toHaveLength(1));
    expect(String(answersTo(asked.event_id)[0]!.content.body)).toContain("not allowed");
    const [offer] = await ask("longopts");
    const notices = hs.sentBy(roomId, bot, "m.room.message").length;
    hs.sendText(roomId, mallory, "/call adv.who user_id=x");
    hs.sendText(roomId, mallory, "1", { replyTo: offer!.event_id });
    hs.react(roomId, mallory, offer!.event_id, KEYCAPS[0]);
    hs.sendFile(roomId, mallory, { name: "payload.md", mime: "text/markdown", data: "# hi" });
    const [marker] = await ask("marker");
    expect(marker!.content.body).toBe(echoAnswer("marker").answer);
    expect(hs.sentBy(roomId, bot, "m.room.message")).toHaveLength(notices + 1);
    expect(
      hostile
        .calls()
        .slice(calls)
        .map((c) => JSON.parse(c.split("\t")[1]!).question),
    ).toEqual(["longopts", "marker"]);
    await expectNothingLeft();
  }, 30_000);

  it("invite into a bound room from a stranger: declined, nothing else", async () => {
    hs.invite(elsewhere, mallory, bot);
    await eventually(() => expect(hs.membership(elsewhere, bot)).toBe("leave"));
    expect(await roomKeys(db, matrixRoom(elsewhere))).toEqual([]);
    await expectNothingLeft();
  });
});
