import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import type { Reply } from "../../src/core/reply.js";
import { CHOSEN_MARK, MatrixSender } from "../../src/matrix/matrix-sender.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import { MAX_EVENT_BYTES, MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import {
  deliveryContext,
  FAST_RETRY,
  matrixConfig,
  matrixQuestion,
  memoryLedger,
} from "../support/matrix-fixtures.js";
import { waitFor } from "../support/wait.js";

const tricky = `<b>bold?</b> & "quotes" *stars* _under_ \`tick\` &amp; 1 < 2 > 0`;

function answerReply(answer: string, caveat: string | null, options: string[] = []): Reply {
  return {
    blocks: [
      { type: "answer", ok: true, answer, items: [{ id: "run-1", url: "https://runs.example/1" }], caveat },
    ],
    options: options.map((label, i) => ({ token: `t${i}`, label })),
  };
}

describe("MatrixSender against the homeserver stand-in", () => {
  let hs: MatrixHomeserverStandin;
  let bot: { userId: string; accessToken: string };
  let alice: string;
  let roomId: string;
  let sender: MatrixSender;

  beforeAll(async () => {
    hs = await MatrixHomeserverStandin.start();
    bot = hs.registerUser("bot");
    alice = hs.registerUser("alice").userId;
    roomId = hs.createRoom(alice, { members: [bot.userId] });
    sender = new MatrixSender({
      config: matrixConfig(hs.url, bot.accessToken, [{ room: roomId }]),
      log: silentLogger(),
      retry: FAST_RETRY,
      typingRefreshMs: 50,
    });
  });
  afterAll(async () => {
    await hs.close();
  });

  it("sends an m.notice replying to the question, with HTML special characters literal in body and HTML", async () => {
    const question = hs.sendText(roomId, alice, "which arm won?");
    const refs = await sender.deliver(
      matrixQuestion(roomId, question.event_id, alice),
      { reply: answerReply(tricky, `caveat ${tricky}`) },
      deliveryContext("turn-html"),
    );
    expect(refs).toHaveLength(1);
    const sent = hs.rooms.event(roomId, refs[0]!)!;
    expect(sent.sender).toBe(bot.userId);
    expect(sent.content.msgtype).toBe("m.notice");
    expect(sent.content.format).toBe("org.matrix.custom.html");
    expect(sent.content["m.relates_to"]).toEqual({ "m.in_reply_to": { event_id: question.event_id } });
    const body = String(sent.content.body);
    const html = String(sent.content.formatted_body);
    expect(body).toContain(tricky);
    expect(body).toContain(`caveat ${tricky}`);
    expect(html).toContain("&lt;b&gt;bold?&lt;/b&gt; &amp; ");
    expect(html).toContain("&amp;amp;");
    expect(html).not.toContain("<b>bold?</b>");
    expect(html).toContain("<blockquote>");
    expect(html).toContain('href="https://runs.example/1"');
  });

  it("stays in the question's thread", async () => {
    const root = hs.sendText(roomId, alice, "thread root");
    const question = hs.sendText(roomId, alice, "in thread", { threadRoot: root.event_id });
    const [ref] = await sender.deliver(
      matrixQuestion(roomId, question.event_id, alice, { threadRoot: root.event_id }),
      { reply: answerReply("threaded", null) },
      deliveryContext("turn-thread"),
    );
    expect(hs.rooms.event(roomId, ref!)?.content["m.relates_to"]).toEqual({
      rel_type: "m.thread",
      event_id: root.event_id,
      is_falling_back: false,
      "m.in_reply_to": { event_id: question.event_id },
    });
  });

  it("pre-places keycap reactions on the part with options, and marks a chosen offer with ✅", async () => {
    const question = hs.sendText(roomId, alice, "hmm?");
    const [offer] = await sender.deliver(
      matrixQuestion(roomId, question.event_id, alice),
      { reply: answerReply("Which one?", null, ["runs.compare", "runs.list", "runs.claims_check"]) },
      deliveryContext("turn-offer"),
    );
    const keys = () =>
      hs.sentBy(roomId, bot.userId, "m.reaction").flatMap((e) => {
        const rel = e.content["m.relates_to"] as { event_id: string; key: string };
        return rel.event_id === offer ? [rel.key] : [];
      });
    expect(keys()).toEqual(KEYCAPS.slice(0, 3));
    const choice = hs.react(roomId, alice, offer!, KEYCAPS[1]);
    await sender.deliver(
      { ...matrixQuestion(roomId, choice.event_id, alice), kind: "reaction", messageRef: offer!, number: 2 },
      {
        reply: answerReply("listed", null),
        chosen: { offerId: "o1", label: "runs.list", messageRefs: [offer!] },
      },
      deliveryContext("turn-choice"),
    );
    expect(keys()).toEqual([...KEYCAPS.slice(0, 3), CHOSEN_MARK]);
  });

  it("sends each part once when a turn is retried: the ledger skips, the transaction id dedupes", async () => {
    const question = hs.sendText(roomId, alice, "again?");
    const event = matrixQuestion(roomId, question.event_id, alice);
    const outcome = { reply: answerReply("once only", null, ["a", "b"]) };
    const ledger = memoryLedger();
    const first = await sender.deliver(event, outcome, deliveryContext("turn-retry", ledger));
    const count = hs.sentBy(roomId, bot.userId).length;
    // The worker died after sending but before recording: a fresh ledger, the same turn id.
    const second = await sender.deliver(event, outcome, deliveryContext("turn-retry", memoryLedger()));
    const third = await sender.deliver(event, outcome, deliveryContext("turn-retry", ledger));
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(hs.sentBy(roomId, bot.userId)).toHaveLength(count);
    expect([...ledger.entries.keys()]).toEqual(["part:0", "keycap:0", "keycap:1"]);
  });

  it("rides out 429 M_LIMIT_EXCEEDED with retry_after_ms, and 5xx", async () => {
    const question = hs.sendText(roomId, alice, "busy?");
    hs.failNext(2, { status: 429, errcode: "M_LIMIT_EXCEEDED", retryAfterMs: 150 });
    hs.failNext(1, { status: 502 });
    const started = Date.now();
    const [ref] = await sender.deliver(
      matrixQuestion(roomId, question.event_id, alice),
      { reply: answerReply("after the storm", null) },
      deliveryContext("turn-429"),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(hs.rooms.event(roomId, ref!)?.content.body).toContain("after the storm");
    const sends = hs.requests.filter((r) => r.path.includes("/send/m.room.message/"));
    expect(sends.slice(-4).map((r) => r.status)).toEqual([429, 429, 502, 200]);
  });

  it("gives up on a 4xx that retrying cannot fix", async () => {
    const question = hs.sendText(roomId, alice, "forbidden?");
    hs.failNext(1, { status: 403, errcode: "M_FORBIDDEN" });
    await expect(
      sender.deliver(
        matrixQuestion(roomId, question.event_id, alice),
        { reply: answerReply("never", null) },
        deliveryContext("turn-403"),
      ),
    ).rejects.toThrow(/HTTP 403/);
  });

  it("splits a long reply into events under the size limit, nothing cut, options on the last", async () => {
    const question = hs.sendText(roomId, alice, "long?");
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i} <&> "\\" ${"é".repeat(20)}`);
    const refs = await sender.deliver(
      matrixQuestion(roomId, question.event_id, alice),
      { reply: answerReply(lines.join("\n"), "the caveat", ["one", "two"]) },
      deliveryContext("turn-long"),
    );
    expect(refs.length).toBeGreaterThan(1);
    const parts = refs.map((ref) => hs.rooms.event(roomId, ref)!);
    for (const part of parts) expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThan(MAX_EVENT_BYTES);
    const text = parts.map((p) => String(p.content.body)).join("\n");
    for (const line of [lines[0]!, lines[1500]!, lines[2999]!, "the caveat"]) expect(text).toContain(line);
    expect(String(parts.at(-1)!.content.body)).toContain("2️⃣ two");
    const reacted = hs
      .sentBy(roomId, bot.userId, "m.reaction")
      .map((e) => (e.content["m.relates_to"] as { event_id: string }).event_id);
    expect(reacted.filter((id) => id === refs.at(-1))).toHaveLength(2);
    expect(reacted.filter((id) => refs.slice(0, -1).includes(id))).toHaveLength(0);
  });

  it("shows typing while working and stops when told", async () => {
    const question = hs.sendText(roomId, alice, "slow?");
    const stop = sender.working(matrixQuestion(roomId, question.event_id, alice));
    const mine = () => hs.typing.filter((t) => t.roomId === roomId && t.userId === bot.userId);
    // Renewed while working: a second "typing" arrives after the first.
    await waitFor(() => mine().filter((t) => t.typing).length >= 2, undefined, "typing renewed");
    stop();
    await waitFor(() => mine().at(-1)?.typing === false, undefined, "typing stopped");
  });
});
