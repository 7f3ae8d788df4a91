// Runs before `npm pack` / `npm publish`: builds dist/ (what the package runs) and puts
// the lockfile beside it as npm-shrinkwrap.json, so an install of the package gets the
// exact dependency tree the tests ran on (and can come from the npm cache offline).
// ROOMGATE_PACK_PREBUILT=1 packs the dist/ already built (the packaging test builds once).
import { execFileSync } from "node:child_process";
import { copyFileSync } from "node:fs";
import process from "node:process";

if (process.env.ROOMGATE_PACK_PREBUILT !== "1") {
  const run = (args) => execFileSync(process.execPath, args, { stdio: "inherit" });
  run(["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"]);
  run(["scripts/copy-assets.mjs"]);
}
copyFileSync("package-lock.json", "npm-shrinkwrap.json");
