import { describe, expect, it } from "vitest";
import { topologyOf } from "../../src/sessions/redis-topology.js";

describe("the Redis topology a configuration names", () => {
  it("is REDIS_URL's single instance whatever the file says", () => {
    const redis = { url: "redis://file:6379", prefix: "rg" } as never;
    expect(topologyOf(redis, { REDIS_URL: "redis://env:6379" })).toEqual({
      kind: "single",
      url: "redis://env:6379",
    });
  });

  it("is the file's cluster or sentinel group, and the embedded default when none is named", () => {
    expect(topologyOf({ cluster: { nodes: ["redis://a:7000"] } } as never, {})).toEqual({
      kind: "cluster",
      nodes: ["redis://a:7000"],
    });
    expect(topologyOf({ sentinel: { name: "rg", nodes: ["redis://s:26379"] } } as never, {})).toEqual({
      kind: "sentinel",
      name: "rg",
      nodes: ["redis://s:26379"],
    });
    expect(topologyOf(undefined, {})).toBeUndefined();
  });
});
