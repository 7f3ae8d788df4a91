import { statSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** A file's expected seconds when vitest has not timed it yet (a fresh clone, as in CI). */
const GUESS_MS: Record<string, number> = { system: 20_000, redis: 8_000, unit: 500 };

/**
 * Runs the files expected to take longest first, whatever their tier, so the pool's
 * workers finish together instead of one long file starting last. A file's time is the
 * last run's when vitest cached it, else its tier's guess (bigger files first within).
 */
export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const expected = new Map(
      files.map((spec) => {
        const key = `${spec.project.name}:${relative(root, spec.moduleId)}`;
        const cached = this.ctx.cache.getFileTestResults(key)?.duration;
        const guess = (GUESS_MS[spec.project.name] ?? 0) + statSync(spec.moduleId).size / 1000;
        return [spec, cached ?? guess] as const;
      }),
    );
    return [...files].sort((a, b) => expected.get(b)! - expected.get(a)!);
  }
}
