import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { passedDurations, recordPassedDurations } from "../../support/passed-durations.ts";

describe("the durations kept of passing runs", () => {
  let folder: string;
  let path: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), "passed-durations-"));
    path = join(folder, "cache", "durations-passed.json");
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it("keep a file's last passing duration when a later run of it fails, and take the next one that passes", () => {
    recordPassedDurations(
      [
        { project: "heavy", file: "test/integration/a.heavy.test.ts", ms: 500_000, passed: true },
        { project: "integration", file: "test/integration/b.test.ts", ms: 20_000.4, passed: true },
      ],
      path,
    );
    recordPassedDurations(
      [{ project: "heavy", file: "test/integration/a.heavy.test.ts", ms: 2_400_000, passed: false }],
      path,
    );
    const kept = passedDurations(path);
    expect(kept("heavy", "test/integration/a.heavy.test.ts")).toBe(500_000);
    expect(kept("integration", "test/integration/b.test.ts")).toBe(20_000);
    expect(kept("unit", "test/integration/b.test.ts")).toBeUndefined();
    recordPassedDurations(
      [{ project: "heavy", file: "test/integration/a.heavy.test.ts", ms: 450_000, passed: true }],
      path,
    );
    expect(passedDurations(path)("heavy", "test/integration/a.heavy.test.ts")).toBe(450_000);
  });

  it("know none, rather than fail, where nothing was kept or the file was cut short", () => {
    expect(passedDurations(path)("heavy", "x")).toBeUndefined();
    recordPassedDurations([], path);
    writeFileSync(path, '{"heavy x": 1');
    expect(passedDurations(path)("heavy", "x")).toBeUndefined();
  });
});
