import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keptTimeline } from "../../support/timeline-reporter.ts";

describe("the timelines kept in the machine's cache", () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), "timelines-"));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));
  /** Keeps a run of `kind` started `minute` minutes into the day, as the reporter writes it. */
  const keep = (kind: "whole" | "part", minute: number) =>
    writeFileSync(keptTimeline(folder, Date.UTC(2026, 10, 29, 0, minute), kind), "[]\n");

  it("keep the last ten whole runs however many runs of one project follow them", () => {
    for (let minute = 0; minute < 12; minute++) keep("whole", minute);
    for (let minute = 12; minute < 40; minute++) keep("part", minute);
    const names = readdirSync(folder).sort();
    const whole = names.filter((name) => name.startsWith("whole-"));
    const part = names.filter((name) => name.startsWith("part-"));
    expect(whole).toHaveLength(10);
    // The oldest two whole runs went, the newest stayed.
    expect(whole[0]).toBe("whole-2026-11-29T00-02-00.000Z.json");
    expect(whole.at(-1)).toBe("whole-2026-11-29T00-11-00.000Z.json");
    expect(part).toHaveLength(10);
    expect(part[0]).toBe("part-2026-11-29T00-30-00.000Z.json");
  });

  it("count files named before kinds were as whole runs, the oldest going first", () => {
    writeFileSync(join(folder, "2026-11-28T23-00-00.000Z.json"), "[]\n");
    for (let minute = 0; minute < 9; minute++) keep("whole", minute);
    expect(readdirSync(folder)).toContain("2026-11-28T23-00-00.000Z.json");
    keep("whole", 9);
    expect(readdirSync(folder)).not.toContain("2026-11-28T23-00-00.000Z.json");
    expect(readdirSync(folder)).toHaveLength(10);
  });
});
