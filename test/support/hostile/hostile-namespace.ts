import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import type { Answer } from "../../../src/core/answer.js";
import { EMPTY_ANSWER } from "../../../src/render/doc.js";

/** The hostile namespace as a stdio child, with the file its calls are logged to. */
export interface HostileNamespace {
  /** The `namespaces.adv` entry of a config. */
  config: { command: string[]; env: Record<string, string> };
  /** Every tools/call the server received, as `tool<TAB>json args`. */
  calls(): string[];
}

/** A fresh hostile namespace configuration with its own call log. */
export function hostileNamespace(env: Record<string, string> = {}): HostileNamespace {
  const callLog = join(mkdtempSync(join(tmpdir(), "roomgate-hostile-")), "calls.log");
  return {
    config: {
      command: [
        process.execPath,
        "--import",
        "tsx",
        join(process.cwd(), "test/support/hostile/hostile-server.ts"),
      ],
      env: { HOSTILE_CALL_LOG: callLog, ...env },
    },
    calls: () => (existsSync(callLog) ? readFileSync(callLog, "utf8").split("\n").filter(Boolean) : []),
  };
}

/** Text without any whitespace: how platforms split and join parts differs only in whitespace. */
function squash(text: string): string {
  return text.replace(/\s+/gu, "");
}

/**
 * Asserts that what a platform showed, its parts joined, carries the Answer whole and in
 * order: answer line (or the empty-answer placeholder), item ids, the caveat in full, and
 * each option's label numbered. Whitespace is ignored only where a split may drop one
 * separator; every other character must be there, in order.
 */
export function expectAnswerShown(
  shown: string,
  answer: Answer,
  options: { show?: (text: string) => string; number?: (i: number) => string } = {},
): void {
  const show = options.show ?? ((text: string) => text);
  const number = options.number ?? ((i: number) => `${i + 1}.`);
  const haystack = squash(shown);
  const pieces = [
    answer.answer === "" ? EMPTY_ANSWER : answer.answer,
    ...answer.items.map((item) => item.id),
    ...(answer.caveat ? [answer.caveat] : []),
    ...answer.options.map((option, i) => `${number(i)} ${option}`),
  ];
  let at = 0;
  for (const piece of pieces) {
    const needle = squash(show(piece));
    const found = haystack.indexOf(needle, at);
    expect(found, `not shown in order: ${JSON.stringify(piece.slice(0, 60))}`).toBeGreaterThanOrEqual(0);
    at = found + needle.length;
  }
}
