import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { permissionTexts } from "../../src/engine/permission-texts.js";
import { BOARD_URI } from "../support/mcp-2026/events.js";
import { mcp26Server, type Mcp26Server } from "../support/mcp-2026/harness.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { forge, pressOf, StandinGroup } from "../support/team.js";
import { TelegramApiStandin, type StandinBot, type StoredMessage } from "../support/telegram-api-standin.js";
import { WAIT_MS, waitFor } from "../support/wait.js";

// `roomgate start` with Telegram rooms of the stand-in, bound to the SDK v2 test server
// (a real child process) once as a 2026-07-28 server and once as a 2025-11-25 one: the
// people in the rooms see the same questions, buttons, refusals, expiry, progress,
// results and resource posts on either revision.

const ALICE = { id: 2601, first_name: "Alice" };
const BOB = { id: 2602, first_name: "Bob" };
const STAGE_MS = 1200;

const seen = (messages: StoredMessage[]) => messages.map((m) => m.text ?? "").join("\n");
const hasButton = (messages: StoredMessage[], label: string) =>
  messages.some((m) => m.reply_markup?.inline_keyboard.flat().some((b) => b.text.endsWith(label)));

const cases = [
  { speaks: "both" as const, revision: "2026-07-28", group: -1002601 },
  { speaks: "2025-11-25" as const, revision: "2025-11-25", group: -1002602 },
];

describe.each(cases)(
  "a room on a server speaking $speaks ($revision)",
  ({ speaks, revision, group: groupId }) => {
    const modern = revision === "2026-07-28";
    let standin: TelegramApiStandin;
    let bot: StandinBot;
    let hasty: StandinBot;
    let db: TestRedis;
    let server: Mcp26Server;
    let roomgate: RoomgateProcess;
    let dm: StandinGroup;
    let group: StandinGroup;
    let hastyDm: StandinGroup;

    beforeAll(async () => {
      standin = await TelegramApiStandin.start();
      // Forum topic mode on: a direct chat then shows a call's progress as a draft, with Stop.
      bot = standin.addBot({ username: "mt_bot", topics: true });
      hasty = standin.addBot({ username: "mt_hasty_bot" });
      db = await testRedis();
      server = mcp26Server(speaks, STAGE_MS);
      roomgate = RoomgateProcess.start(
        {
          redis: { url: db.url, prefix: db.prefix },
          namespaces: {
            mt: server.namespace,
            // The same server where nobody has long to answer.
            mth: { ...server.namespace, prefix: "mt.", elicitTimeoutSeconds: 3 },
          },
          telegram: {
            apiRoot: standin.url,
            limits: { groupPerMinute: 600, chatPerSecond: 30 },
            bots: [
              {
                token: "${TELEGRAM_MT_TOKEN}",
                namespace: "mt",
                users: [ALICE.id, BOB.id],
                groups: [{ chat: groupId, users: [ALICE.id, BOB.id], respond: "all" }],
                subscribe: [BOARD_URI],
                onUpdate: "show",
              },
              { token: "${TELEGRAM_MTH_TOKEN}", namespace: "mth", users: [ALICE.id] },
            ],
          },
        },
        { TELEGRAM_MT_TOKEN: bot.token, TELEGRAM_MTH_TOKEN: hasty.token, LOG_LEVEL: "info" },
      );
      await waitFor(
        () => standin.isPolling(bot.token) && standin.isPolling(hasty.token),
        60_000,
        "the bots to poll",
      );
      dm = new StandinGroup(standin, bot, { id: ALICE.id, type: "private", first_name: ALICE.first_name });
      group = new StandinGroup(standin, bot, { id: groupId, type: "supergroup", title: "Ops" });
      hastyDm = new StandinGroup(standin, hasty, {
        id: ALICE.id,
        type: "private",
        first_name: ALICE.first_name,
      });
    }, 90_000);

    afterAll(async () => {
      await roomgate?.stop();
      await db?.cleanup();
      await standin?.close();
    });

    /** What the bot showed as a call's status, in order: status messages, their edits, drafts. */
    const statusShown = (token: StandinBot) =>
      ["sendMessage", "editMessageText", "sendMessageDraft"]
        .flatMap((method) => standin.callsTo(method, token.id))
        .filter((c) => c.ok)
        .sort((a, b) => a.at - b.at)
        .map((c) => String((c.params as { text?: unknown }).text ?? ""));

    it("asks the router's question with buttons; the choice goes back and the Answer is shown verbatim", async () => {
      const asked = await dm.say(ALICE, "deploy please", 2);
      expect(asked).toBe("mt asks: Deploy where?\n(1/1) Target\nWhere the build goes\nChoose one.");
      const question = dm.messages().at(-1)!;
      expect(question.reply_markup!.inline_keyboard.flat().map((b) => b.text)).toEqual([
        "1. staging",
        "2. production",
        "3. Decline",
        "4. Cancel",
      ]);
      const before = dm.messages().length;
      await dm.press(ALICE, "production");
      await waitFor(() => dm.messages().length > before, WAIT_MS, "the Answer");
      const answer = dm.messages().at(-1)!.text!;
      expect(answer.split("\n")[0]).toBe('Deployed to production <now> & "live".');
      expect(answer).toContain("deploy-1");
      expect(answer).toContain("Rollback stays open for *one* hour.");
      const calls = server.events("call").filter((e) => e.question === "deploy please");
      expect(calls.map((e) => e.responses)).toEqual([[], ["target"]]);
      expect(calls[0]!.era).toBe(modern ? "modern" : "legacy");
    });

    it("in a group, the question goes to the person asked alone; another member's press does not answer it", async () => {
      const roomBefore = group.messages().length;
      const bobBefore = group.seenBy(BOB).length;
      const aliceBefore = group.seenBy(ALICE).length;
      standin.userSends(bot.token, { from: ALICE, chat: group.chat, text: "deploy for the team" });
      const mine = await waitFor(
        () => {
          const shown = group.seenBy(ALICE).slice(aliceBefore);
          return hasButton(shown, "staging") && shown;
        },
        WAIT_MS,
        "the question, for Alice alone",
      );
      expect(seen(mine)).toContain("mt asks Alice: Deploy where?");
      // The room sees that Alice is asked, not what; Bob sees no question and no buttons.
      await waitFor(
        () => seen(group.messages().slice(roomBefore)).includes(permissionTexts.answeringFor("Alice")),
        WAIT_MS,
        "the room's line",
      );
      expect(seen(group.messages().slice(roomBefore))).not.toContain("Deploy where?");
      expect(seen(group.seenBy(BOB).slice(bobBefore))).not.toContain("Deploy where?");
      expect(hasButton(group.seenBy(BOB), "staging")).toBe(false);
      // Bob cannot press Alice's buttons; his press of "staging" replayed into the room's
      // inbox is queued before hers and still does not answer: she gets production.
      await forge(db, pressOf(group, "mt", BOB, group.buttonData("staging", ALICE), "bob-staging"));
      const before = group.messages().length;
      await group.press(ALICE, "production");
      await waitFor(() => group.messages().length > before, WAIT_MS, "the Answer");
      expect(group.messages().at(-1)!.text!.split("\n")[0]).toBe('Deployed to production <now> & "live".');
      const answered = server.events("call").filter((e) => e.question === "deploy for the team");
      expect(answered.map((e) => e.responses)).toEqual([[], ["target"]]);
    });

    it("a question nobody answers expires, and the server hears it was cancelled", async () => {
      const asked = await hastyDm.say(ALICE, "deploy later", 2);
      expect(asked).toContain("mth asks: Deploy where?");
      const before = hastyDm.messages().length;
      await waitFor(() => hastyDm.messages().length >= before + 2, WAIT_MS, "the expiry and the Answer");
      expect(
        hastyDm
          .messages()
          .slice(before)
          .map((m) => m.text),
      ).toEqual([
        "No answer came in time, so the question was cancelled.",
        "Not deployed: the question was declined.",
      ]);
      const answered = server.events("answered").filter((e) => e.question === "deploy later");
      expect(answered.map((e) => e.action)).toEqual(["cancel"]);
    });

    it("/call fills the missing argument, then asks two rounds of the server's questions", async () => {
      await dm.say(ALICE, "/tools");
      expect(await dm.say(ALICE, "/call mt.release")).toContain("To run mt.release I need");
      const channel = await dm.say(ALICE, "1.2.3", 2);
      expect(channel).toContain("mt asks: Release 1.2.3: which channel?");
      expect(channel).toContain("(1/2) Channel\nChoose one.");
      const notes = dm.messages().length;
      await dm.press(ALICE, "stable");
      await waitFor(() => dm.messages().length > notes, WAIT_MS, "the second field");
      expect(dm.messages().at(-1)!.text).toContain("(2/2) Release notes (optional)");
      const confirm = await dm.say(ALICE, "first cut", 2);
      expect(confirm).toContain("mt asks: Release 1.2.3 to stable?");
      expect(confirm).toContain("Go ahead\nYes or No?");
      const before = dm.messages().length;
      await dm.press(ALICE, "Yes");
      await waitFor(() => dm.messages().length > before, WAIT_MS, "the result");
      expect(dm.messages().at(-1)!.text).toContain("Released 1.2.3 to stable (first cut).");
    }, 60_000);

    it("shows a build's progress in one status, then its result (a task on 2026-07-28)", async () => {
      await group.say(ALICE, "/tools");
      const before = statusShown(bot).length;
      const from = group.messages().length;
      await group.say(ALICE, "/call mt.build");
      await waitFor(
        () =>
          group
            .messages()
            .slice(from)
            .some((m) => m.text?.includes("build of main ready: 42 files")),
        WAIT_MS,
        "the build's result",
      );
      const shown = statusShown(bot).slice(before);
      if (modern) {
        expect(shown.some((t) => /^⏳ mt\.build: started \(task [0-9a-f-]{36}\)$/.test(t))).toBe(true);
        expect(shown.some((t) => /^⏳ mt\.build: working — \w+ \(\d\/3\)$/.test(t))).toBe(true);
        expect(server.events("task-created").map((e) => e.tool)).toEqual(["mt.build"]);
      } else {
        expect(shown.some((t) => /^⏳ mt\.build: \d\/3 \(\d+%\) — \w+$/.test(t))).toBe(true);
        expect(server.events("task-created")).toEqual([]);
      }
      expect(shown).toContain("✓ mt.build: finished");
    });

    it.runIf(modern)(
      "asks a running task's question in the room and answers it with tasks/update",
      async () => {
        const roomBefore = group.messages().length;
        const aliceBefore = group.seenBy(ALICE).length;
        await group.say(ALICE, "/call mt.ship", 1);
        const mine = await waitFor(
          () => {
            const shown = group.seenBy(ALICE).slice(aliceBefore);
            return hasButton(shown, "Yes") && shown;
          },
          WAIT_MS,
          "the task's question, for Alice alone",
        );
        expect(seen(mine)).toContain("mt asks Alice: Sign the release?");
        expect(seen(group.messages().slice(roomBefore))).not.toContain("Sign the release?");
        // Bob's "No" (Alice's button replayed), queued before her "Yes", is not her answer.
        await forge(db, pressOf(group, "mt", BOB, group.buttonData("No", ALICE), "bob-no"));
        const before = group.messages().length;
        await group.press(ALICE, "Yes");
        await waitFor(
          () =>
            group
              .messages()
              .slice(before)
              .some((m) => m.text?.includes("shipped, signed")),
          WAIT_MS,
          "the shipped result",
        );
        expect(server.events("tasks/update").map((e) => e.responses)).toEqual([
          { sign: { action: "accept", content: { sign: true } } },
        ]);
      },
    );

    it.runIf(modern)(
      "a running task's question nobody answers expires: tasks/update tells the server it was cancelled",
      async () => {
        await hastyDm.say(ALICE, "/tools");
        const before = hastyDm.messages().length;
        standin.userSends(hasty.token, { from: ALICE, chat: hastyDm.chat, text: "/call mt.ship" });
        await waitFor(
          () =>
            hastyDm
              .messages()
              .slice(before)
              .some((m) => m.text?.includes("shipped, unsigned")),
          WAIT_MS,
          "the task's result after the expiry",
        );
        const shown = seen(hastyDm.messages().slice(before));
        expect(shown).toContain("mth asks: Sign the release?");
        expect(shown).toContain("No answer came in time, so the question was cancelled.");
        expect(server.events("tasks/update").at(-1)!.responses).toEqual({ sign: { action: "cancel" } });
      },
    );

    it("Stop on a build's progress draft stops it at the server (tasks/cancel on 2026-07-28); one line, no result", async () => {
      await dm.say(ALICE, "/tools");
      const from = dm.messages().length;
      const startedAt = Date.now();
      standin.userSends(bot.token, { from: ALICE, chat: dm.chat, text: "/call mt.build target=slow" });
      const draft = await waitFor(
        () =>
          standin
            .drafts(bot.token, ALICE.id)
            .find((d) => d.at >= startedAt && d.canStop && /^⏳ mt\.build: .*\d\/3/.test(d.text)),
        WAIT_MS,
        "the build's progress draft with a Stop button",
      );
      standin.userStops(bot.token, ALICE.id, draft.draftId);
      await waitFor(
        () =>
          dm
            .messages()
            .slice(from)
            .some((m) => m.text === "Stopped."),
        WAIT_MS,
        "the turn to end",
      );
      if (modern) {
        const [task] = server.events("task-created").filter((e) => e.at >= startedAt);
        await waitFor(
          () => server.events("tasks/cancel").some((e) => e.taskId === task!.taskId),
          WAIT_MS,
          "tasks/cancel at the server",
        );
      } else {
        await waitFor(
          () => server.events("call-cancelled").some((e) => e.at >= startedAt),
          WAIT_MS,
          "the server to hear the call was cancelled",
        );
      }
      // The Stop was taken by the call: nothing runs any more, and its result never shows.
      expect(await dm.say(ALICE, "/cancel")).toBe("Nothing is running here to cancel.");
      expect(
        dm
          .messages()
          .slice(from)
          .map((m) => m.text),
      ).not.toContainEqual(expect.stringContaining("build of slow ready"));
    });

    it("a server asking for what a room cannot give (sampling) gets a plain refusal, and the tool does not run", async () => {
      await dm.say(ALICE, "/tools");
      const refused = await dm.say(ALICE, "/call mt.paint");
      // On 2026-07-28 the server refuses the call (-32021, sampling not declared); on
      // 2025-11-25 its tool says so itself. Either way a line, and nothing painted.
      if (modern) {
        expect(refused).toMatch(
          /^mt could not run mt\.paint \(it needs sampling from the client, which a chat cannot give\); the operator has the details \(ref [0-9a-f]{8}\)\.$/,
        );
      } else {
        expect(refused).toContain('mt.paint (agent "mt") reported an error');
        expect(refused).toContain("did not declare the required capability");
      }
      expect(refused).not.toContain("painted");
      expect(server.events("call").filter((e) => e.tool === "mt.paint")).toHaveLength(1);
    });

    it("posts an update of the subscribed resource into the bound room", async () => {
      server.setNote(`board is green on ${revision}`);
      await waitFor(
        () => dm.messages().some((m) => m.text?.startsWith(`🔔 Resource updated: ${BOARD_URI}`)),
        WAIT_MS,
        "the resource post",
      );
      const post = dm.messages().findLast((m) => m.text?.startsWith("🔔 Resource updated"))!;
      expect(post.text).toContain(`board is green on ${revision}`);
      // On 2026-07-28 through subscriptions/listen (no resources/subscribe), on 2025-11-25 through resources/subscribe.
      expect(server.events("updated").at(-1)!.era).toBe(modern ? "modern" : "legacy");
      const subscribed = server.events("subscribe").map((e) => e.era);
      if (modern) expect(subscribed).toEqual([]);
      else expect(subscribed).toContain("legacy");
    });
  },
);
