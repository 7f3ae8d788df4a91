import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argumentsHash } from "../../src/sessions/audit-log.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { exportedTrail, operatorCommand, StandinGroup, teamNamespace } from "../support/team.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { elapse, waitFor } from "../support/wait.js";

const ALICE = { id: 1801, first_name: "Alice" };
const BOB = { id: 1802, first_name: "Bob" };
const CAROL = { id: 1803, first_name: "Carol" };
const DAVE = { id: 1804, first_name: "Dave" };
const ERIN = { id: 1805, first_name: "Erin" };
const TEAM = { id: -1001801, type: "supergroup" as const, title: "Team" };
const OPS = { id: -1001802, type: "supergroup" as const, title: "Ops" };
const QUIET = { id: -1001803, type: "supergroup" as const, title: "Quiet" };
const STALE = { id: -1001804, type: "supergroup" as const, title: "Stale" };
const APPROVAL_SECONDS = 10;

const team = teamNamespace();
let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let roomgate: RoomgateProcess;
let env: Record<string, string>;
/** When the call whose approval expires was asked (in beforeAll). */
let staleAskedAt = 0;
const chat = (c: typeof TEAM) => new StandinGroup(standin, bot, c);
const wipes = () => team.calls().filter((c) => c.startsWith("h.wipe\t"));
const trail = () => exportedTrail(roomgate.configFile, env);

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot({ username: "roles_bot" });
  db = await testRedis();
  env = { TELEGRAM_TEAM_TOKEN: bot.token, REDIS_URL: db.url };
  const group = (c: typeof TEAM, extra: Record<string, unknown>) => ({
    chat: c.id,
    respond: "all",
    ...extra,
  });
  roomgate = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      namespaces: { h: team.config },
      // Long enough for the four presses of the two-person test on a loaded CI box (3 s
      // expired under it), short enough for the expiry test to wait out.
      sessions: { approvalSeconds: APPROVAL_SECONDS },
      telegram: {
        apiRoot: standin.url,
        limits: { groupPerMinute: 600, chatPerSecond: 30 },
        bots: [
          {
            token: "${TELEGRAM_TEAM_TOKEN}",
            namespace: "h",
            groups: [
              group(TEAM, {
                name: "team",
                users: [ALICE.id, BOB.id, CAROL.id],
                callers: [ALICE.id],
                approvers: [BOB.id, CAROL.id],
                approvals: { tools: ["h.wi*", "h.trans?er"], by: "approvers", count: 2 },
              }),
              group(OPS, {
                name: "ops",
                users: [ALICE.id],
                approvers: [BOB.id],
                approvals: { where: "dm" },
              }),
              group(QUIET, { name: "quiet", users: [ALICE.id], audit: { arguments: false } }),
              group(STALE, { name: "stale", users: [ALICE.id, BOB.id], approvers: [BOB.id] }),
            ],
          },
        ],
      },
    },
    env,
  );
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
  for (const c of [TEAM, OPS, QUIET, STALE]) await chat(c).say(ALICE, "/tools");
  // Asked now, so the wait for its expiry overlaps the tests before the expiry test.
  await chat(STALE).say(ALICE, "/call h.wipe target=stale");
  staleAskedAt = Date.now();
}, 60_000);

afterAll(async () => {
  await roomgate.stop();
  await db.cleanup();
  await standin.close();
});

describe("roles per binding, on roomgate start and the Bot API stand-in", () => {
  it("callers: a user who is not one may ask, but not use /call or /tools", async () => {
    const room = chat(TEAM);
    expect(await room.say(CAROL, "/call h.slow")).toBe(
      "Only this room's callers may use /call here. Ask your question without it, or ask the operator.",
    );
    expect(await room.say(CAROL, "/tools")).toContain("Only this room's callers may use /tools");
    expect(await room.say(CAROL, "hello")).toContain("pong: hello");
    expect(team.calls().filter((c) => c.startsWith("h.slow"))).toEqual([]);
  });

  it("two-person approval: the requester cannot approve, one approver is not enough, the second runs it", async () => {
    const room = chat(TEAM);
    expect(await room.say(ALICE, "/call h.wipe target=prod")).toContain(
      "2 of this room's approvers must approve it",
    );
    expect(await room.press(ALICE, "Approve")).toBe("Only this room's approvers may approve this call.");
    expect(await room.press(BOB, "Approve")).toBe(
      "Approved by Bob (1 of 2); h.wipe waits for one more approval.",
    );
    expect(await room.press(BOB, "Approve")).toBe(
      "You approved this already (1 of 2); it needs another approver.",
    );
    expect(wipes()).toEqual([]);
    expect(await room.say(CAROL, "yes")).toContain(`WIPED prod as tg:${ALICE.id}`);
    expect(wipes().map((c) => JSON.parse(c.split("\t")[1]!))).toEqual([
      { target: "prod", user: `tg:${ALICE.id}` },
    ]);
  });

  it("approvals.tools patterns hold a tool MCP does not mark destructive; an approver's Deny ends it, recorded", async () => {
    const room = chat(TEAM);
    const sent = () => team.calls().filter((c) => c.startsWith("h.transfer\t"));
    expect(await room.say(ALICE, "/call h.transfer to=acct-9")).toContain(
      "2 of this room's approvers must approve it",
    );
    await room.press(BOB, "Deny");
    await waitFor(
      () => room.messages().some((m) => m.text?.includes("Denied by Bob: h.transfer was not run.")),
      30_000,
      "the denial",
    );
    expect(await room.say(CAROL, "yes")).not.toContain("SENT");
    expect(sent()).toEqual([]);
    const denied = trail().find((e) => e.type === "approval.denied" && e.tool === "h.transfer");
    expect(denied).toMatchObject({
      binding: "team",
      by: `tg:${BOB.id}`,
      requester: `tg:${ALICE.id}`,
      argumentsHash: argumentsHash({ to: "acct-9", user: `tg:${ALICE.id}` }),
    });
  });

  it("approvals.where: dm: the approver is asked in their direct chat, and the call runs in the group", async () => {
    const group = chat(OPS);
    expect(await group.say(ALICE, "/call h.wipe target=ops-db")).toContain(
      "they were asked in their direct chats with the bot",
    );
    const dm = new StandinGroup(standin, bot, { id: BOB.id, type: "private", first_name: "Bob" });
    await waitFor(
      () => dm.messages().some((m) => m.reply_markup),
      30_000,
      "the approval in Bob's direct chat",
    );
    expect(
      dm
        .messages()
        .map((m) => m.text)
        .join("\n"),
    ).toContain("Alice asked for this call in");
    expect(await dm.press(BOB, "Approve")).toBe("Passed on to the room the call was asked in.");
    await waitFor(() => group.messages().some((m) => m.text?.includes("WIPED ops-db")), 30_000, "the call");
    expect(
      group
        .messages()
        .map((m) => m.text)
        .join("\n"),
    ).toContain(`WIPED ops-db as tg:${ALICE.id}`);
  });

  it("an approval that waited too long expires: a late press runs nothing", async () => {
    const room = chat(STALE);
    const expired = staleAskedAt + APPROVAL_SECONDS * 1000 + 500;
    await waitFor(() => Date.now() > expired, expired - Date.now() + 1000, "the approval's expiry");
    expect(await room.press(BOB, "Approve")).toContain("expired");
    expect(wipes().filter((c) => c.includes("stale"))).toEqual([]);
  });

  it("#12 the audit trail: who approved which call, with the arguments' hash and arguments; expiries; never a secret", async () => {
    const quiet = chat(QUIET);
    await quiet.say(ALICE, "/call h.wipe target=hidden");
    expect(await quiet.say(ALICE, "y")).toContain("WIPED hidden");
    await quiet.say(ALICE, `/call h.wipe target=${bot.token}`);
    await quiet.say(ALICE, "y");
    const entries = trail();
    const prod = { target: "prod", user: `tg:${ALICE.id}` };
    const granted = entries.filter((e) => e.type === "approval.granted" && e.binding === "team");
    expect(granted.map((e) => e.by)).toEqual([`tg:${BOB.id}`, `tg:${CAROL.id}`]);
    expect(granted[0]).toMatchObject({
      tool: "h.wipe",
      requester: `tg:${ALICE.id}`,
      argumentsHash: argumentsHash(prod),
      arguments: prod,
      needed: 2,
    });
    const made = entries.find((e) => e.type === "call.destructive" && e.binding === "team");
    expect(made).toMatchObject({
      tool: "h.wipe",
      requester: `tg:${ALICE.id}`,
      approvedBy: [`tg:${BOB.id}`, `tg:${CAROL.id}`],
      outcome: "ok",
      argumentsHash: argumentsHash(prod),
      arguments: prod,
    });
    expect(typeof made!.time).toBe("string");
    expect(
      entries.some((e) => e.type === "approval.expired" && JSON.stringify(e.arguments).includes("stale")),
    ).toBe(true);
    expect(
      entries.some((e) => e.type === "approval.granted" && e.binding === "ops" && e.by === `tg:${BOB.id}`),
    ).toBe(true);
    // audit.arguments: false keeps the hash only.
    const hidden = entries.filter((e) => e.binding === "quiet" && e.type === "call.destructive");
    expect(hidden).toHaveLength(2);
    expect(hidden.every((e) => e.arguments === undefined && typeof e.argumentsHash === "string")).toBe(true);
    expect(JSON.stringify(entries)).not.toContain(bot.token.split(":")[1]);
  });

  it("pairing: a one-time code adds a stranger to the binding's users; users list and remove; wrong codes are limited", async () => {
    const room = chat(TEAM);
    const made = operatorCommand(["pair", "-c", roomgate.configFile, "--binding", "team"], env);
    expect(made.status).toBe(0);
    const code = /\b([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})\b/.exec(made.stdout)![1]!;
    expect(code.replace(/-/g, "")).toHaveLength(16); // 80 bits
    expect(await room.say(DAVE, "hello")).toContain("not allowed");
    expect(await room.say(DAVE, `/pair ${code}`)).toContain("Paired");
    expect(await room.say(DAVE, "hello")).toContain("pong: hello");
    // Single use: the same code does nothing for anyone else.
    expect(await room.say(ERIN, `/pair ${code}`)).toContain("not valid");
    for (let i = 0; i < 4; i++) await room.say(ERIN, `/pair WRNG-WRNG-WRNG-WRN${i}`);
    const fresh = /\b([0-9A-Z]{4}(?:-[0-9A-Z]{4}){3})\b/.exec(
      operatorCommand(["pair", "-c", roomgate.configFile, "--binding", "team"], env).stdout,
    )![1]!;
    expect(await room.say(ERIN, `/pair ${fresh}`)).toContain("Too many wrong pairing codes");
    const listed = operatorCommand(["users", "list", "-c", roomgate.configFile, "--binding", "team"], env);
    expect(listed.stdout).toMatch(new RegExp(`team  tg:${DAVE.id}  paired \\S+  \\(Dave\\)`));
    expect(listed.stdout).toContain(`team  tg:${ALICE.id}  configured`);
    const removed = operatorCommand(
      ["users", "remove", "-c", roomgate.configFile, "--binding", "team", String(DAVE.id)],
      env,
    );
    expect(removed.stdout).toContain(`removed tg:${DAVE.id} from team`);
    // Every process reloads paired users within 2 s of a change (PairedUsers' refresh): that
    // promised interval, plus a margin, is the one duration this step is made of.
    await elapse(2_500, "paired users' refresh interval");
    const asks = () => team.calls().filter((c) => c.startsWith("h.ask"));
    const asked = asks().length;
    standin.userSends(bot.token, { from: DAVE, chat: TEAM, text: "still there?" });
    // Alice's message comes after Dave's in the group: once she is answered, his was weighed.
    standin.userSends(bot.token, { from: ALICE, chat: TEAM, text: "after Dave" });
    await waitFor(
      () => room.messages().some((m) => m.text?.includes("pong: after Dave")),
      30_000,
      "Alice's answer",
    );
    expect(asks()).toHaveLength(asked + 1);
    expect(asks().join("\n")).not.toContain("still there?");
    const entries = trail();
    expect(entries.find((e) => e.type === "pairing.added")).toMatchObject({
      binding: "team",
      user: `tg:${DAVE.id}`,
    });
    expect(entries.find((e) => e.type === "pairing.removed")).toMatchObject({
      binding: "team",
      user: `tg:${DAVE.id}`,
      by: expect.stringMatching(/^operator/),
    });
  });
});
