import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// The install steps written at the top of examples/roomgate.service, run as written
// under a scratch root: /etc and /var/lib are moved there, `roomgate` is this checkout's.
// Steps that change the machine's accounts or systemd (useradd, chgrp to the service
// group, cp into /etc/systemd, systemctl) and the doctor (it asks Telegram) are left out.
const unit = readFileSync("examples/roomgate.service", "utf8");
const root = mkdtempSync(join(tmpdir(), "roomgate-systemd-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SKIPPED = /^(useradd|chgrp|systemctl|cp roomgate\.service|roomgate doctor)\b/;

/** A step's words with the scratch root in place of /etc and /var/lib. */
function words(line: string): string[] {
  return line
    .replaceAll("/etc/roomgate", join(root, "etc/roomgate"))
    .replaceAll("/var/lib/roomgate", join(root, "var/lib/roomgate"))
    .split(/\s+/)
    .filter((w) => w !== "");
}

function run(argv: string[], env: NodeJS.ProcessEnv = process.env) {
  const [program, ...args] =
    argv[0] === "roomgate" ? [process.execPath, "bin/roomgate", ...argv.slice(1)] : argv;
  return spawnSync(program!, args, { encoding: "utf8", env, timeout: 60_000 });
}

describe("the systemd unit's install steps", () => {
  it("work as written: the folder is made, and the configuration validates with the token the .env gets", () => {
    const steps = [...unit.matchAll(/^#\s+\$ (.+)$/gm)].map((m) => m[1]!.trim());
    expect(steps.some((s) => s.startsWith("install -d"))).toBe(true);
    mkdirSync(join(root, "etc"), { recursive: true });
    for (const step of steps) {
      if (SKIPPED.test(step)) continue;
      // The service group exists only where useradd ran: ownership is not tried here.
      const argv = words(step).filter(
        (w, i, all) => !["-o", "-g"].includes(w) && !["-o", "-g"].includes(all[i - 1]!),
      );
      const done = run(argv, { ...process.env, HOME: root });
      expect(done.status, `${step}\n${done.stdout}${done.stderr}`).toBe(0);
    }
    const etc = join(root, "etc/roomgate");
    expect(statSync(etc).mode & 0o777).toBe(0o750);
    expect(statSync(join(etc, "roomgate.yaml")).mode & 0o777).toBe(0o640);
    expect(statSync(join(etc, ".env")).mode & 0o777).toBe(0o640);

    // "then put the bot's token in /etc/roomgate/.env"
    appendFileSync(join(etc, ".env"), `TELEGRAM_TOKEN=123456789:${"A".repeat(35)}\n`);
    // The unit's own ExecStartPre, with its Environment= lines and nothing from this shell's.
    const environment = Object.fromEntries(
      [...unit.matchAll(/^Environment=(\w+)=(.*)$/gm)].map((m) => [
        m[1]!,
        m[2]!.replaceAll("/var/lib/roomgate", join(root, "var/lib/roomgate")),
      ]),
    );
    const pre = unit.match(/^ExecStartPre=(.+)$/m)![1]!;
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, ...environment };
    const check = run(words(pre), env);
    expect(check.stdout, check.stderr).toBe(`${join(etc, "roomgate.yaml")}: valid\n`);
    expect(check.status).toBe(0);
  });
});
