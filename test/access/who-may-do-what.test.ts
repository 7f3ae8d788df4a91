import type { Update } from "grammy/types";
import { describe, expect, it } from "vitest";
import { bindingFinder } from "../../src/access/bindings.js";
import { askedOfSender } from "../../src/access/pending.js";
import { matrixRecheck, shellRecheck, telegramRecheck } from "../../src/access/recheck.js";
import { mayInvite, type CommandRole } from "../../src/access/rules.js";
import { ConfigSchema } from "../../src/core/config.js";
import { InboundEventSchema, type InboundEvent } from "../../src/core/event.js";
import { matrixRoom, shellRoom } from "../../src/core/room.js";
import { hasRole, openAccess } from "../../src/engine/access.js";
import { isAllowed, roomBindings } from "../../src/matrix/room-policy.js";
import { edgeOf, type BotIdentity } from "../../src/telegram/edge-record.js";
import { normalizeUpdate } from "../../src/telegram/update-normalizer.js";

/**
 * Who may do what, on every platform, from one configuration: each row is decided by
 * every place that decides it — the adapter's edge, the worker's re-check of the queued
 * event, the engine's role check — and they must all agree with the row.
 */

const BOT = 4242;
const [ALICE, BOB, CAROL, DAVE, MALLORY] = [11, 12, 13, 14, 66];
const GROUP = -1001;
const UNBOUND = -1009;

const config = ConfigSchema.parse({
  namespaces: { feed: { command: ["true"] }, runs: { command: ["true"] } },
  telegram: {
    bots: [
      {
        token: `${BOT}:secret`,
        namespace: "feed",
        users: [ALICE],
        groups: [
          {
            chat: GROUP,
            users: [ALICE, BOB],
            callers: [ALICE],
            approvers: [CAROL],
            approvals: { by: "approvers", where: "dm" },
          },
        ],
      },
    ],
  },
  matrix: {
    homeserver: "https://matrix.example.org",
    accessToken: "token",
    rooms: [
      { room: "!ops:x", namespace: "runs", users: ["@alice:x"], approvers: ["@carol:x"] },
      { room: "!mods:x", namespace: "runs", powerLevel: 50 },
    ],
  },
  shell: { rooms: [{ room: "ops", users: ["alice"], approvers: ["carol"] }] },
});

/** Dave was added to the Telegram group, and Mallory to the Matrix room, by `/pair`. */
const PAIRED = new Set([`telegram:${BOT}:${GROUP}|tg:${DAVE}`, `matrix:!ops:x|@mallory:x`]);
const paired = (binding: string, sender: string) => PAIRED.has(`${binding}|${sender}`);

const LEVELS = { users: { "@mod:x": 50, "@low:x": 10 }, users_default: 0 };

type Act = "ask" | "press" | CommandRole | "invite";
type Where =
  | { platform: "telegram"; chat: "dm" | "group" | "unbound" }
  | { platform: "matrix"; room: "!ops:x" | "!mods:x" }
  | { platform: "shell"; room: "ops" | "scratch" };
interface Row {
  where: Where;
  who: number | string;
  act: Act;
  may: boolean;
  why: string;
}

const tg = (chat: "dm" | "group" | "unbound"): Where => ({ platform: "telegram", chat });
const mx = (room: "!ops:x" | "!mods:x"): Where => ({ platform: "matrix", room });
const sh = (room: "ops" | "scratch"): Where => ({ platform: "shell", room });

const TABLE: Row[] = [
  { where: tg("dm"), who: ALICE, act: "ask", may: true, why: "listed for the bot's direct chats" },
  { where: tg("dm"), who: MALLORY, act: "ask", may: false, why: "deny by default" },
  { where: tg("dm"), who: BOB, act: "ask", may: false, why: "a group's user is not a direct-chat user" },
  { where: tg("dm"), who: CAROL, act: "ask", may: false, why: "an approver is no user" },
  {
    where: tg("dm"),
    who: CAROL,
    act: "press",
    may: true,
    why: "approvals of a `where: dm` group are pressed here",
  },
  { where: tg("dm"), who: MALLORY, act: "press", may: false, why: "a stranger's press" },
  { where: tg("dm"), who: ALICE, act: "approver", may: true, why: "no approvers named: any user governs" },
  { where: tg("group"), who: BOB, act: "ask", may: true, why: "listed for the group" },
  { where: tg("group"), who: DAVE, act: "ask", may: true, why: "added by pairing" },
  { where: tg("group"), who: MALLORY, act: "ask", may: false, why: "deny by default" },
  { where: tg("group"), who: CAROL, act: "ask", may: false, why: "an approver is no user" },
  { where: tg("group"), who: CAROL, act: "press", may: true, why: "approvers press approval buttons" },
  { where: tg("group"), who: ALICE, act: "caller", may: true, why: "named in `callers`" },
  { where: tg("group"), who: BOB, act: "caller", may: false, why: "a user, but `callers` names others" },
  { where: tg("group"), who: CAROL, act: "approver", may: true, why: "named in `approvers`" },
  {
    where: tg("group"),
    who: ALICE,
    act: "approver",
    may: false,
    why: "approvers named: users do not govern",
  },
  { where: tg("unbound"), who: ALICE, act: "ask", may: false, why: "no binding names the group" },
  { where: mx("!ops:x"), who: "@alice:x", act: "ask", may: true, why: "listed for the room" },
  { where: mx("!ops:x"), who: "@mallory:x", act: "ask", may: true, why: "added by pairing" },
  { where: mx("!ops:x"), who: "@eve:x", act: "ask", may: false, why: "deny by default" },
  { where: mx("!ops:x"), who: "@alice:x", act: "caller", may: true, why: "no callers named: users call" },
  { where: mx("!ops:x"), who: "@carol:x", act: "approver", may: true, why: "named in `approvers`" },
  {
    where: mx("!ops:x"),
    who: "@alice:x",
    act: "approver",
    may: false,
    why: "approvers named: users do not govern",
  },
  {
    where: mx("!ops:x"),
    who: "@alice:x",
    act: "invite",
    may: true,
    why: "a room's users may invite the bot",
  },
  { where: mx("!ops:x"), who: "@eve:x", act: "invite", may: false, why: "a stranger's invite" },
  { where: mx("!mods:x"), who: "@mod:x", act: "ask", may: true, why: "at the room's power level" },
  { where: mx("!mods:x"), who: "@low:x", act: "ask", may: false, why: "below the room's power level" },
  { where: sh("ops"), who: "alice", act: "ask", may: true, why: "listed for the terminal room" },
  { where: sh("ops"), who: "mallory", act: "ask", may: false, why: "deny by default" },
  { where: sh("ops"), who: "carol", act: "approver", may: true, why: "named in `approvers`" },
  {
    where: sh("scratch"),
    who: "anyone",
    act: "ask",
    may: true,
    why: "the operator's own terminal: whoever sits there",
  },
];

const identity: BotIdentity = { id: BOT, username: "FeedBot", config: config.telegram!.bots[0]!, paired };
const noDocuments = () => Promise.reject(new Error("no document"));

/** A Telegram update of `who` in the chat: a message, or a press on the bot's message for `press`. */
function telegramUpdate(chat: "dm" | "group" | "unbound", who: number, act: Act): Update {
  const at =
    chat === "dm"
      ? { id: who, type: "private", first_name: "P" }
      : { id: chat === "group" ? GROUP : UNBOUND, type: "supergroup", title: "G" };
  const from = { id: who, is_bot: false, first_name: "P" };
  if (act === "press") {
    const message = { message_id: 7, date: 1, chat: at, from: { id: BOT, is_bot: true, first_name: "B" } };
    return {
      update_id: 1,
      callback_query: { id: "q", from, chat_instance: "i", message, data: "x" },
    } as Update;
  }
  const entities = [{ type: "bot_command", offset: 0, length: 5 }];
  return {
    update_id: 1,
    message: { message_id: 5, date: 1, chat: at, from, text: "/help", entities },
  } as Update;
}

/** The event a Matrix or terminal room's edge would queue for `who`, with its edge verdict. */
function queued(where: Where, who: string, allowed: boolean): InboundEvent {
  const common = {
    eventId: "e1",
    platform: where.platform,
    receivedAt: 1,
    addressed: "direct",
    kind: "message",
  };
  if (where.platform === "matrix") {
    const origin = { platform: "matrix", roomId: where.room, eventId: "$e", answerTo: "$e" };
    return InboundEventSchema.parse({
      ...common,
      namespace: "runs",
      room: matrixRoom(where.room),
      sender: { id: who, allowed },
      origin,
      text: "hi",
    });
  }
  const room = shellRoom(where.platform === "shell" ? where.room : "");
  const sender = { id: `shell:${who}`, allowed };
  return InboundEventSchema.parse({
    ...common,
    namespace: "feed",
    room,
    sender,
    origin: { platform: "shell" },
    text: "hi",
  });
}

/** Every verdict on the row, by where it is decided. */
async function verdicts(row: Row): Promise<Record<string, boolean>> {
  const { where, who, act } = row;
  const out: Record<string, boolean> = {};
  let event: InboundEvent;
  if (where.platform === "telegram") {
    const update = telegramUpdate(where.chat, who as number, act);
    const seen = edgeOf(update, identity)!;
    if (act === "ask" || act === "press") out.edge = seen.edge.sender.allowed;
    // A chat no binding names is left at the edge: nothing is queued for the worker to check.
    const built = await normalizeUpdate(update, seen, identity, noDocuments);
    if (!built) return out;
    event = built;
    if (act === "ask" || act === "press") out.worker = telegramRecheck(config.telegram!, paired)(event);
  } else if (where.platform === "matrix") {
    const binding = roomBindings(config.matrix!).get(where.room)!;
    const edge = isAllowed(binding, who as string, LEVELS, paired);
    event = queued(where, who as string, edge);
    if (act === "ask") out.edge = edge;
    if (act === "ask") out.worker = matrixRecheck(config.matrix!, paired)(event);
    if (act === "invite") out.invite = mayInvite(binding, who as string);
  } else {
    event = queued(where, who as string, true);
    // The terminal's edge and the worker ask the same rule.
    if (act === "ask") out.edgeAndWorker = shellRecheck(config, paired)(event);
  }
  if (act === "user" || act === "caller" || act === "approver" || act === "ask") {
    const binding = bindingFinder(config)(event);
    const access = { ...openAccess, paired, ...(binding ? { binding } : {}) };
    // The engine sees no power levels: a room that admits by level is decided at the edge alone.
    if (binding?.powerLevel === undefined)
      out.engine = hasRole(access, act === "ask" ? "user" : act, event.sender.id);
  }
  return out;
}

describe("who may do what, on every platform", () => {
  it.each(
    TABLE.map(
      (row) => [`${row.where.platform} ${JSON.stringify(row.where)} ${row.who} ${row.act}`, row] as const,
    ),
  )("%s", async (_name, row) => {
    const found = await verdicts(row);
    expect(Object.keys(found).length, "at least one place decides the row").toBeGreaterThan(0);
    for (const [where, may] of Object.entries(found)) expect(may, `${where}: ${row.why}`).toBe(row.may);
  });

  it("inside a room, what was asked of one person is answered by that person; the room's by anyone", () => {
    const alice = { id: "tg:11", name: "Alice" };
    expect(askedOfSender(alice, "tg:11")).toBe(true);
    expect(askedOfSender(alice, "tg:12")).toBe(false);
    expect(askedOfSender(undefined, "tg:12")).toBe(true);
  });
});
