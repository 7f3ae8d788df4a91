import { expect, it } from "vitest";
import { UNQUEUED_NOTICE } from "../../src/core/unqueued.js";
import { matrixRoomRuntime, repliesTo } from "../support/matrix-room-runtime.js";
import { matrixRefusalWorld } from "../support/matrix-refusal-world.js";
import { waitFor } from "../support/wait.js";

/**
 * Redis refusing writes (MISCONF) while a Matrix message waits at the homeserver: the
 * sync fetches its batch again every second, and the room is told once — an m.notice
 * in reply to the message, not one per fetch — then the message is answered after the
 * notice when Redis takes writes again.
 */
const world = matrixRefusalWorld("rg-mx-outage");
const { capture } = world;

it("tells the room once while its message cannot be queued, then answers it after the notice", async () => {
  const room = await matrixRoomRuntime(world.hs, {
    redisUrl: world.server.url,
    prefix: "mx-outage",
    log: capture.log,
    // Told after 2 s held instead of 10 s: the test waits for events, not for the default.
    notices: { afterMs: 2000, paceMs: 100, perOutage: 100, roomEveryMs: 600_000 },
  });
  world.runtime = room.runtime;
  const { roomId, alice, sent } = room;
  const notices = () => sent().filter((e) => e.content.body === UNQUEUED_NOTICE);
  const first = world.hs.sendText(roomId, alice, "hello there");
  await waitFor(() => repliesTo(sent(), first.event_id).length > 0, 20_000, "the first answer");

  await world.refuseWrites();
  const asked = world.hs.sendText(roomId, alice, "what failed last night?");
  await waitFor(() => notices().length > 0, 20_000, "the room told");
  const refetches = () =>
    capture.lines().filter((l) => String(l.msg).startsWith("matrix: could not queue an event")).length;
  const atNotice = refetches();
  // Still refused: the batch is fetched again each second, and the room is not told again.
  await waitFor(() => refetches() >= atNotice + 3, 20_000, "batches fetched again after the notice");
  expect(
    capture
      .lines()
      .some(
        (l) =>
          String(l.msg).startsWith("matrix: could not queue an event") &&
          JSON.stringify(l).includes("MISCONF"),
      ),
  ).toBe(true);
  await world.acceptWrites();

  await waitFor(() => repliesTo(sent(), asked.event_id).length === 2, 30_000, "the held message answered");
  const [notice, answer] = repliesTo(sent(), asked.event_id);
  expect(notice!.content).toMatchObject({ msgtype: "m.notice", body: UNQUEUED_NOTICE });
  expect(notice!.content["m.mentions"]).toEqual({ user_ids: [alice] });
  expect(answer!.content.body).not.toBe(UNQUEUED_NOTICE);
  expect(answer!.pos).toBeGreaterThan(notice!.pos);
  expect(notices()).toHaveLength(1);
  expect(repliesTo(sent(), first.event_id)).toHaveLength(1);
}, 90_000);
