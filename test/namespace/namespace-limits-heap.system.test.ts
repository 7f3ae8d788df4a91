import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

// Issue 25: a real `roomgate start` with a 128 MB heap against greedy namespaces
// (test/support/hostile/greedy-server.ts). Before the limits, the endless listing
// killed this process with "Reached heap limit" in about 5 s.

const HEAP_MB = 128;
const ALICE = { id: 7101, first_name: "Alice" };
const GREEDY = [
  process.execPath,
  "--import",
  "tsx",
  join(process.cwd(), "test/support/hostile/greedy-server.ts"),
];

let standin: TelegramApiStandin;
let lister: StandinBot;
let flooder: StandinBot;
let db: TestRedis;
let roomgate: RoomgateProcess;
let port: number;
let baselineMb = 0;

const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      total += Number(line.split(" ").at(-1));
  }
  return total;
}

/** Waits for `done` while sampling the process's used heap; resolves to the largest sample, in MB. */
async function peakHeapWhile(done: () => boolean, ms: number, what: string): Promise<number> {
  let peak = 0;
  await waitFor(
    async () => {
      peak = Math.max(peak, sample(await scrape(), "roomgate_nodejs_heap_size_used_bytes") / 1e6);
      return done();
    },
    ms,
    what,
  );
  return peak;
}

const alive = () => roomgate.child.exitCode === null && roomgate.child.signalCode === null;
const said = (bot: StandinBot, needle: string) =>
  standin.botMessages(bot.token, ALICE.id).some((m) => String(m.text ?? "").includes(needle));

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  lister = standin.addBot({ username: "endless_list_bot" });
  flooder = standin.addBot({ username: "progress_flood_bot" });
  db = await testRedis();
  port = await freePort();
  roomgate = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      http: { host: "127.0.0.1", port },
      namespaces: {
        list: { command: GREEDY, env: { GREEDY: "endless-list" }, prefix: "g.", ask: false },
        flood: { command: GREEDY, env: { GREEDY: "progress-flood", GREEDY_RUN_MS: "10000" }, prefix: "g." },
      },
      telegram: {
        apiRoot: standin.url,
        bots: [
          { token: lister.token, namespace: "list", users: [ALICE.id] },
          { token: flooder.token, namespace: "flood", users: [ALICE.id] },
        ],
      },
    },
    { LOG_LEVEL: "info", NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` },
  );
  await waitFor(
    () => standin.isPolling(lister.token) && standin.isPolling(flooder.token),
    30_000,
    "the bots",
  );
  // The first scrape starts the default metrics; the second reads the heap at rest.
  await scrape();
  baselineMb = sample(await scrape(), "roomgate_nodejs_heap_size_used_bytes") / 1e6;
});

afterAll(async () => {
  await roomgate.stop();
  await db.cleanup();
  await standin.close();
});

describe(`namespace limits in a real process with a ${HEAP_MB} MB heap`, () => {
  it("endless tool listing: /tools gets the limit's line, the process stays up, heap bounded", async () => {
    standin.userSends(lister.token, { from: ALICE, text: "/tools" });
    const peak = await peakHeapWhile(() => said(lister, "limits.maxTools"), 30_000, "the limit's line");
    expect(alive()).toBe(true);
    expect(peak).toBeLessThan(100);
    const metrics = await scrape();
    expect(
      sample(metrics, "roomgate_namespace_limits_total", { namespace: "list", limit: "tools" }),
    ).toBeGreaterThanOrEqual(1);
    // One operator line per refused listing, not one per page.
    expect(roomgate.output.match(/listed more than 2000 tools/g)?.length ?? 0).toBeGreaterThanOrEqual(1);
    console.log(
      `endless listing: peak heap ${peak.toFixed(1)} MB (${baselineMb.toFixed(1)} MB at start), process alive`,
    );
  }, 60_000);

  // The flood's notifications are garbage as soon as they are coalesced: the used heap then
  // swings with the collector's timing and the flood's speed (79 MB on a busy box, 116-140 MB
  // on an idle one, alive each time), so what this case bounds is the cap itself — a process
  // that kept what the flood sends would die at 128 MB — and the statuses it shows.
  it("progress flood: the answer arrives, the process stays up under the capped heap, progress shown a few times", async () => {
    standin.userSends(flooder.token, { from: ALICE, text: "/tools" });
    await waitFor(() => said(flooder, "g.flood"), 20_000, "the tools enabled");
    standin.userSends(flooder.token, { from: ALICE, text: "/call g.flood" });
    const peak = await peakHeapWhile(() => said(flooder, "flood done"), 40_000, "the flood's answer");
    expect(alive()).toBe(true);
    const sent = Number(
      /flood done: (\d+)/.exec(
        standin
          .botMessages(flooder.token, ALICE.id)
          .map((m) => String(m.text ?? ""))
          .join("\n"),
      )![1],
    );
    const shown = standin.drafts(flooder.token, ALICE.id).length + standin.callsTo("editMessageText").length;
    expect(sent).toBeGreaterThan(10_000);
    expect(shown).toBeLessThan(40);
    console.log(
      `progress flood: ${sent} notifications, ${shown} status updates, peak heap ${peak.toFixed(1)} MB (${baselineMb.toFixed(1)} MB at start)`,
    );
  }, 60_000);
});
