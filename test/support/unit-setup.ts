import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";

// The unit tier starts no processes: a unit test that spawns one fails here, naming
// the fix, instead of passing slowly (or only where the binary happens to exist).
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const) {
  Object.assign(childProcess, {
    [name]: () => {
      throw new Error(
        `child_process.${name} in a unit test: the unit tier starts no processes; ` +
          "rename the file to X.system.test.ts (or X.redis.test.ts when it runs the code in-process against Redis)",
      );
    },
  });
}
syncBuiltinESMExports();
