/** Every source module loads under plain Node, not only through Vitest's transforms (CommonJS interop, type stripping). */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && entry.name !== "main.ts" ? [path] : [];
  });
}

it("imports every module of src/ with the project's Node", () => {
  const files = sourceFiles(join(root, "src"));
  expect(files.length).toBeGreaterThan(10);
  const script = files.map((file) => `await import(${JSON.stringify(file)});`).join("\n");
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(result.stderr, `failed to load one of: ${files.map((f) => relative(root, f)).join(", ")}`).toBe("");
  expect(result.status).toBe(0);
});
