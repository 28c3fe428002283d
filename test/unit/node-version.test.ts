/** The suite runs under the Node the project brings, never the machine's end-of-life one. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const packageJson = JSON.parse(
  readFileSync(join(import.meta.dirname, "..", "..", "package.json"), "utf8"),
) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};

const parse = (version: string) =>
  version
    .replace(/^v|^>=/, "")
    .split(".")
    .map(Number);

it("runs under the Node version pinned in devDependencies, which satisfies engines", () => {
  console.log(`tests run under Node ${process.version}`);
  expect(process.version).toBe(`v${packageJson.devDependencies.node}`);
  const [major = 0, minor = 0] = parse(process.version);
  const [minMajor = 0, minMinor = 0] = parse(packageJson.engines.node);
  expect(major > minMajor || (major === minMajor && minor >= minMinor)).toBe(true);
});
