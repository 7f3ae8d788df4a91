import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { z } from "zod";
import { checkConfigText, ConfigSchema } from "../../src/core/config.js";
import { registry } from "../../src/ops/metrics.js";

/** A token of BotFather's shape: config check warns about one that is not. */
const BOT_TOKEN = `123:${"A".repeat(35)}`;

const EXAMPLE_ENV = {
  TELEGRAM_TOKEN: BOT_TOKEN,
  RUNS_TOKEN: "t",
  MATRIX_TOKEN: "syt_an_example_matrix_access_token",
  MATRIX_STORE_KEY: "a-store-key-of-enough-length",
  HOOK_CI_SECRET: "an-example-hook-secret",
};

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
};
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;

/** Every key path the schema knows (`telegram.bots.users`, records and arrays collapsed). */
function schemaKeys(schema: z.ZodType, prefix = ""): string[] {
  let s = schema;
  for (let d = defOf(s); d.innerType ?? (d.type === "pipe" ? d.in : undefined); d = defOf(s))
    s = (d.innerType ?? d.in)!;
  const def = defOf(s);
  if (def.type === "array") return schemaKeys(def.element!, prefix);
  if (def.type === "record") return schemaKeys(def.valueType!, prefix);
  if (def.type !== "object") return [];
  return Object.entries(def.shape ?? {}).flatMap(([key, value]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return [path, ...schemaKeys(value, path)];
  });
}

/** Key paths written in a YAML tree (record keys under `namespaces` collapsed), plus keys in commented-out lines. */
function documentedKeys(text: string): Set<string> {
  const found = new Set<string>();
  const walk = (value: unknown, prefix: string, record: boolean) => {
    if (Array.isArray(value)) return value.forEach((v) => walk(v, prefix, false));
    if (value === null || typeof value !== "object") return;
    for (const [key, v] of Object.entries(value)) {
      const path = record ? prefix : prefix ? `${prefix}.${key}` : key;
      if (!record) found.add(path);
      walk(v, path, !record && path === "namespaces");
    }
  };
  walk(parse(text), "", false);
  const commented = [...text.matchAll(/^\s*#\s+(?:- )?([A-Za-z]+):/gm)].map((m) => m[1]!);
  for (const path of schemaKeys(ConfigSchema)) {
    const parent = path.split(".").slice(0, -1).join(".");
    if (
      commented.includes(path.split(".").at(-1)!) &&
      (parent === "" || found.has(parent) || commented.includes(parent.split(".").at(-1)!))
    )
      found.add(path);
  }
  return found;
}

describe("examples/roomgate.yaml", () => {
  const text = readFileSync("examples/roomgate.yaml", "utf8");

  it("is valid for the real config loader, with only its secrets from the environment", () => {
    const report = checkConfigText(text, EXAMPLE_ENV);
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([]);
  });

  it("shows every key the configuration accepts", () => {
    const documented = documentedKeys(text);
    const missing = schemaKeys(ConfigSchema).filter((k) => !documented.has(k));
    expect(missing, "keys to add (with a comment) to examples/roomgate.yaml").toEqual([]);
  });

  it("explains each key with a comment", () => {
    const lines = text.split("\n");
    lines.forEach((line, i) => {
      if (!/^\s*(- )?[A-Za-z]+:/.test(line)) return;
      const explained =
        /#/.test(line) || /^\s*#/.test(lines[i - 1] ?? "") || /^\s*- /.test(line) || /:\s*$/.test(line);
      expect(explained, `line ${i + 1}: ${line}`).toBe(true);
    });
  });
});

describe("the README's quick starts", () => {
  const readme = readFileSync("README.md", "utf8");
  const section = (title: string) => {
    const from = readme.indexOf(`## ${title}`);
    return readme.slice(from, readme.indexOf("\n## ", from + 1));
  };
  // Each fenced yaml block, less the indent of its fence (a block inside a list item).
  const yamlBlocks = (text: string) =>
    [...text.matchAll(/^( *)```yaml\n([\s\S]*?)^ *```/gm)].map((m) =>
      m[2]!.replace(new RegExp(`^ {0,${m[1]!.length}}`, "gm"), ""),
    );

  it.each(["Quick start: a Telegram bot in five minutes", "Quick start: Matrix"])(
    "%s: its configuration is valid, with nothing to warn about, once the tokens are in the environment",
    (title) => {
      const blocks = yamlBlocks(section(title));
      expect(blocks).toHaveLength(1);
      const report = checkConfigText(blocks[0]!, EXAMPLE_ENV);
      expect(report.errors).toEqual([]);
      expect(report.warnings).toEqual([]);
    },
  );

  it("Telegram: the steps are install, init, doctor, start", () => {
    const steps = ["npm install -g", "roomgate init", "roomgate doctor", "roomgate start"];
    const text = section("Quick start: a Telegram bot in five minutes");
    const at = steps.map((step) => text.indexOf(step));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});

describe("deployment files", () => {
  it("the compose configuration is valid with the environment compose.yaml gives it", () => {
    const report = checkConfigText(readFileSync("examples/compose-roomgate.yaml", "utf8"), {
      REDIS_URL: "redis://:pw@redis:6379",
      DEMO_MCP_URL: "http://demo:8765/mcp",
      TELEGRAM_FEED_TOKEN: BOT_TOKEN,
      TELEGRAM_USER_ID: "42",
    });
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([]);
    expect(report.config?.telegram?.bots[0]?.users).toEqual([42]);
    expect(report.config?.http).toEqual({ host: "0.0.0.0", port: 9464 });
  });

  it("the Sentinel compose configuration is valid and names the sentinels of its compose file", () => {
    const report = checkConfigText(readFileSync("examples/compose-sentinel-roomgate.yaml", "utf8"), {
      REDIS_PASSWORD: "pw",
      DEMO_MCP_URL: "http://demo:8765/mcp",
      TELEGRAM_FEED_TOKEN: BOT_TOKEN,
      TELEGRAM_USER_ID: "42",
    });
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([]);
    const compose = parse(readFileSync("examples/compose-sentinel.yaml", "utf8"), { merge: true }) as {
      services: Record<string, unknown>;
    };
    const sentinels = report.config?.redis.sentinel?.nodes.map((url) => new URL(url).hostname) ?? [];
    expect(sentinels).toHaveLength(3);
    for (const host of sentinels) expect(Object.keys(compose.services)).toContain(host);
    expect(report.config?.redis.sentinel?.name).toBe("rgmaster");
  });

  it("the Dockerfile builds in stages and runs node dist/cli/main.js as a non-root user with a health check", () => {
    const docker = readFileSync("Dockerfile", "utf8");
    expect(docker.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(docker).toMatch(/npm prune --omit=dev/);
    expect(docker).toMatch(/^USER node$/m);
    // The health check asks /healthz on the port the configuration names, not a fixed one.
    expect(docker).toMatch(
      /^HEALTHCHECK .*\n\s+CMD \["node", "dist\/cli\/main\.js", "health", "-c", "\/etc\/roomgate\/roomgate\.yaml"\]$/m,
    );
    expect(docker).toMatch(/^ENTRYPOINT \["node", "dist\/cli\/main\.js"\]$/m);
    // Every file the build context copies exists.
    for (const [, from] of docker.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const path of from!.split(/\s+/)) expect(existsSync(path), path).toBe(true);
    }
  });

  it("the systemd unit checks the configuration before it starts, and runs start", () => {
    const unit = readFileSync("examples/roomgate.service", "utf8");
    expect(unit).toMatch(/^ExecStartPre=roomgate config check -c \/etc\/roomgate\/roomgate\.yaml$/m);
    expect(unit).toMatch(/^ExecStart=roomgate start -c \/etc\/roomgate\/roomgate\.yaml$/m);
    expect(unit).toMatch(/^User=roomgate$/m);
  });

  it("the Grafana dashboard only uses metrics roomgate exports", async () => {
    const dashboard = JSON.parse(readFileSync("examples/grafana-dashboard.json", "utf8")) as {
      panels: { targets: { expr: string }[] }[];
    };
    const exported = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
    const used = dashboard.panels.flatMap((p) =>
      p.targets.flatMap((t) => [...t.expr.matchAll(/roomgate_[a-z_]+/g)].map((m) => m[0])),
    );
    expect(used.length).toBeGreaterThan(10);
    for (const name of used) expect(exported.has(name.replace(/_(bucket|count|sum)$/, "")), name).toBe(true);
    // Every metric of the set has a panel.
    for (const name of [
      "roomgate_queue_depth",
      "roomgate_queue_oldest_age_seconds",
      "roomgate_dead_letters_total",
      "roomgate_refused_total",
      "roomgate_scope_refusals_total",
      "roomgate_namespace_call_seconds",
      "roomgate_sends_total",
      "roomgate_send_retries_total",
      "roomgate_rate_limited_total",
    ]) {
      expect(
        used.some((u) => u.startsWith(name)),
        name,
      ).toBe(true);
    }
  });
});
