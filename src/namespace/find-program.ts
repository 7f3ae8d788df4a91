import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where a stdio namespace's program is: a path (from its `cwd`), or the first match on
 * PATH; undefined when there is none, so a caller can say so before starting anything.
 */
export function findProgram(program: string, cwd: string | undefined): string | undefined {
  if (program.includes("/")) {
    const path = isAbsolute(program) ? program : resolve(cwd ?? ".", program);
    return executable(path) ? path : undefined;
  }
  return (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "")
    .map((dir) => join(dir, program))
    .find(executable);
}
