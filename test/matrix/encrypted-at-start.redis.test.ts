import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MatrixReceiver } from "../../src/matrix/matrix-receiver.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { matrixConfig, RecordingInbox } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { capturingLogger } from "../support/telegram-fixtures.js";

describe("bound Matrix rooms at start", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  beforeEach(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
  });
  afterEach(async () => {
    await hs.close();
    await redis.cleanup();
  });

  it("names the encrypted ones in the log on every start, not only the first", async () => {
    const bot = hs.registerUser("bot");
    const alice = hs.registerUser("alice").userId;
    const secret = hs.createRoom(alice, { members: [bot.userId], encrypted: true });
    const plain = hs.createRoom(alice, { members: [bot.userId] });
    for (let start = 0; start < 2; start++) {
      const { log, lines } = capturingLogger();
      const receiver = new MatrixReceiver({
        config: matrixConfig(hs.url, bot.accessToken, [
          { room: secret, users: [alice] },
          { room: plain, users: [alice] },
        ]),
        maxFileBytes: 1000,
        redis: redis.redis,
        keys: redis.keys,
        inbox: new RecordingInbox(),
        log,
        syncTimeoutMs: 200,
      });
      await receiver.start();
      await receiver.stop();
      const line = lines().find((l) =>
        String(l.msg).includes("end-to-end encrypted and will not be answered"),
      );
      expect(line, `start ${start + 1}`).toBeDefined();
      expect(line!.rooms).toEqual([secret]);
    }
  });
});
