import { ConfigSchema } from "../../src/core/config.js";
import type { Logger } from "../../src/core/log.js";
import type { OutageNoticeOptions } from "../../src/edge/outage-notices.js";
import { createMatrixPlatform } from "../../src/matrix/matrix-platform.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { FAST_RETRY } from "./matrix-fixtures.js";
import type { MatrixHomeserverStandin } from "./matrix-homeserver-standin.js";
import type { StandinEvent } from "./matrix-standin-rooms.js";
import { demoNamespaces } from "./spine.js";

/** A Matrix room served by an in-process runtime: the bot, and Alice, whom it answers. */
export interface MatrixRoomRuntime {
  runtime: Runtime;
  roomId: string;
  bot: { userId: string; accessToken: string };
  alice: string;
  /** The bot's messages in the room, oldest first. */
  sent(): StandinEvent[];
}

/**
 * Registers a bot and Alice on the stand-in, makes a room for them bound to the demo
 * `runs` namespace (answering everything Alice writes), and starts a whole runtime
 * (receiver, workers) on `redisUrl` with short Matrix timers.
 */
export async function matrixRoomRuntime(
  hs: MatrixHomeserverStandin,
  options: { redisUrl: string; prefix: string; log: Logger; notices?: OutageNoticeOptions },
): Promise<MatrixRoomRuntime> {
  const bot = hs.registerUser(`${options.prefix}-bot`);
  const alice = hs.registerUser(`${options.prefix}-alice`).userId;
  const roomId = hs.createRoom(alice, { name: options.prefix, members: [bot.userId] });
  const demo = demoNamespaces({}, ["runs"]);
  const config = ConfigSchema.parse({
    namespaces: demo.config.namespaces,
    matrix: {
      homeserver: hs.url,
      accessToken: bot.accessToken,
      rooms: [{ room: roomId, namespace: "runs", users: [alice], respond: "all" }],
    },
  });
  const runtime = await startRuntime({
    config,
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    log: options.log,
    platforms: [
      createMatrixPlatform({
        syncTimeoutMs: 300,
        retry: FAST_RETRY,
        typingRefreshMs: 200,
        ...(options.notices ? { notices: options.notices } : {}),
      }),
    ],
  });
  return { runtime, roomId, bot, alice, sent: () => hs.sentBy(roomId, bot.userId, "m.room.message") };
}

/** The events of `events` that reply to `eventId`. */
export function repliesTo(events: StandinEvent[], eventId: string): StandinEvent[] {
  return events.filter(
    (e) =>
      (e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.[
        "m.in_reply_to"
      ]?.event_id === eventId,
  );
}
