import { expect, it } from "vitest";
import { matrixRoomRuntime, repliesTo } from "../support/matrix-room-runtime.js";
import { matrixRefusalWorld } from "../support/matrix-refusal-world.js";
import { waitFor } from "../support/wait.js";

/**
 * Redis refusing writes (MISCONF: a snapshot it cannot write) while a Matrix message
 * arrives: the sync does not move past it, and the message is answered, once, when
 * Redis takes writes again — it is not skipped as a failed event.
 */
const world = matrixRefusalWorld("rg-mx-refuses");
const { capture } = world;

it("answers a message that arrived while Redis refused writes, once, when Redis takes them again", async () => {
  const room = await matrixRoomRuntime(world.hs, {
    redisUrl: world.server.url,
    prefix: "mx-refuses",
    log: capture.log,
  });
  world.runtime = room.runtime;
  const { roomId, alice, sent: answers } = room;
  const first = world.hs.sendText(roomId, alice, "hello there");
  await waitFor(() => answers().some((e) => e.content.body !== undefined), 20_000, "the first answer");
  const before = answers().length;

  await world.refuseWrites();
  const asked = world.hs.sendText(roomId, alice, "what failed last night?");
  await waitFor(
    () =>
      capture
        .lines()
        .filter((l) => String(l.msg).startsWith("matrix: could not queue an event"))
        .some((l) => JSON.stringify(l.err ?? "").includes("MISCONF")),
    20_000,
    "the refusal logged with what Redis said",
  );
  expect(answers()).toHaveLength(before);

  await world.acceptWrites();
  await waitFor(() => repliesTo(answers(), asked.event_id).length > 0, 30_000, "the held message answered");
  expect(repliesTo(answers(), asked.event_id)).toHaveLength(1);
  expect(repliesTo(answers(), first.event_id)).toHaveLength(1);
  expect(capture.lines().some((l) => String(l.msg).includes("event skipped"))).toBe(false);
}, 90_000);

it("fetches a batch whose sync token Redis refused again within a second, so the next message is not held up by a backoff", async () => {
  await world.runtime?.stop();
  const room = await matrixRoomRuntime(world.hs, {
    redisUrl: world.server.url,
    prefix: "mx-refuses-token",
    log: capture.log,
  });
  world.runtime = room.runtime;
  const { roomId, alice, bot, sent: answers } = room;
  world.hs.sendText(roomId, alice, "hello there");
  await waitFor(() => answers().length > 0, 20_000, "the first answer");
  const seen = capture.lines().length;

  await world.refuseWrites();
  // An event the edge ignores without Redis (the bot's own): only the batch's sync token is written.
  world.hs.sendText(roomId, bot.userId, "posted by the bot elsewhere");
  await waitFor(
    () =>
      capture
        .lines()
        .slice(seen)
        .some((l) => String(l.msg).startsWith("matrix") && JSON.stringify(l.err ?? "").includes("MISCONF")),
    20_000,
    "the refused sync token logged",
  );
  await world.acceptWrites();
  const asked = world.hs.sendText(roomId, alice, "and now?");
  // The homeserver backoff (30 s for an error not the homeserver's) would hold this up.
  await waitFor(
    () => repliesTo(answers(), asked.event_id).length > 0,
    15_000,
    "the next message answered soon after Redis is back",
  );
  expect(
    capture.lines().some((l) => String(l.msg).startsWith("matrix: Redis did not take the sync's writes")),
  ).toBe(true);
}, 90_000);
