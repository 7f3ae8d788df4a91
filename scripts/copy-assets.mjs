// tsc copies only TypeScript output; the documented Lua scripts ship beside it.
import { cpSync } from "node:fs";

for (const dir of ["sessions/lua", "scheduler/lua", "matrix/lua"]) {
  cpSync(`src/${dir}`, `dist/${dir}`, { recursive: true });
}
