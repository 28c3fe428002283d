// Runs before the tests (npm's pretest): says which Node this package needs and which one runs, in one line,
// before a test file fails to load on an older Node with an error that names no version.
import { readFileSync } from "node:fs";

const engines = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).engines;
const need = engines.node.replace(/^>=\s*/, "");
const [major, minor] = process.versions.node.split(".").map(Number);
const [needMajor, needMinor = 0] = need.split(".").map(Number);
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  console.error(
    `__PACKAGE_NAME__ needs Node.js ${need} or later, but this is Node.js ${process.versions.node} (${process.execPath}); npm install brings one (the node dev dependency), or run it with a newer node.`,
  );
  process.exit(1);
}
