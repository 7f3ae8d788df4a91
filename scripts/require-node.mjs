// npm test's first step: the suite runs on Node >= 22 (setup.sh links a pinned
// Node 24 into node_modules/.bin when the system one is older).
import process from "node:process";

const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  process.stderr.write(
    `the tests need Node >= 22 and this is ${process.version}: run \`bash scripts/setup.sh\` first.\n`,
  );
  process.exit(1);
}
