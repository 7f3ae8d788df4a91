import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoNamespaces, startSpine, type Spine } from "../support/spine.js";

describe("health and metrics over HTTP", () => {
  let spine: Spine;
  beforeAll(async () => {
    const demo = demoNamespaces({}, ["feed"]);
    spine = await startSpine({
      config: { ...demo.config, http: { host: "127.0.0.1", port: 0 } },
      callLog: demo.callLog,
    });
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("reports healthy while Redis answers", async () => {
    const res = await fetch(`http://127.0.0.1:${spine.runtime.health!.port}/healthz`);
    const body = await res.json();
    expect(body).toEqual({ ok: true, redis: "up", worker: "up", status: "ok" });
    expect(res.status).toBe(200);
  });

  it("counts delivered turns and namespace calls in Prometheus text", async () => {
    await spine.rooms.ask("metrics", "what should I read today?");
    const text = await (await fetch(`http://127.0.0.1:${spine.runtime.health!.port}/metrics`)).text();
    expect(text).toMatch(
      /roomgate_turns_total\{platform="telegram",namespace="feed",outcome="delivered"\} [1-9]/,
    );
    expect(text).toMatch(/roomgate_namespace_calls_total\{namespace="feed",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/roomgate_events_total\{platform="telegram",result="queued"\} [1-9]/);
  });

  it("answers 404 elsewhere", async () => {
    expect((await fetch(`http://127.0.0.1:${spine.runtime.health!.port}/nope`)).status).toBe(404);
  });
});
