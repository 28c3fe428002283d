/**
 * Writes when each test file started and ended on which worker, with the setup, import and test time inside it and
 * each test's own time: the suite's own timeline, to see where workers stood idle (vitest's JSON report dates a file
 * from its first test, after its `beforeAll`). To `OPENMCP_TEST_TIMELINE=<file>`, else into the machine's cache
 * (`timelines/`, the last ten runs of three files or more of each kind: whole runs, one project's), so that a run nobody asked for one of (CI's) can be read afterwards.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { Reporter, TestModule } from "vitest/node";
import { machineCache } from "./machine-cache.ts";
import { recordPassedDurations } from "./passed-durations.ts";

export const TIMELINE_ENV = "OPENMCP_TEST_TIMELINE";

/** One file's line of the timeline; times in seconds from the run's start. */
export interface TimelineEntry {
  readonly file: string;
  readonly project: string;
  readonly worker: number;
  /** When vitest handed the file to a worker (before its setup and import). */
  readonly queued: number;
  readonly start: number;
  readonly end: number;
  readonly setup: number;
  readonly collect: number;
  readonly tests: number;
  readonly state: string;
  /** The machine's one-minute load average when the file ended (how crowded the cores were). */
  readonly load: number;
  /** Each test of the file that ran, with its own duration (what a file's time is made of). */
  readonly cases: readonly { readonly name: string; readonly seconds: number }[];
}

export default class TimelineReporter implements Reporter {
  readonly #asked = process.env[TIMELINE_ENV];
  readonly #queued = new Map<string, number>();
  readonly #started = new Map<string, number>();
  #runStart = Date.now();
  readonly #entries: TimelineEntry[] = [];

  onTestRunStart(): void {
    this.#runStart = Date.now();
  }

  onTestModuleQueued(module: TestModule): void {
    this.#queued.set(module.id, Date.now());
  }

  onTestModuleStart(module: TestModule): void {
    this.#started.set(module.id, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const seconds = (ms: number) => Math.round(ms / 100) / 10;
    const diagnostic = module.diagnostic();
    this.#entries.push({
      file: module.relativeModuleId,
      project: module.project.name,
      worker: diagnostic.concurrencyId,
      queued: seconds((this.#queued.get(module.id) ?? this.#runStart) - this.#runStart),
      start: seconds((this.#started.get(module.id) ?? this.#runStart) - this.#runStart),
      end: seconds(Date.now() - this.#runStart),
      setup: seconds(
        diagnostic.environmentSetupDuration + diagnostic.prepareDuration + diagnostic.setupDuration,
      ),
      collect: seconds(diagnostic.collectDuration),
      tests: seconds(diagnostic.duration),
      state: module.state(),
      load: Math.round((loadavg()[0] ?? 0) * 10) / 10,
      cases: [...module.children.allTests()].flatMap((test) => {
        const duration = test.diagnostic()?.duration;
        return duration === undefined ? [] : [{ name: test.fullName, seconds: seconds(duration) }];
      }),
    });
  }

  onTestRunEnd(): void {
    recordPassedDurations(
      this.#entries.map((entry) => ({
        project: entry.project,
        file: entry.file,
        ms: (entry.end - entry.start) * 1_000,
        passed: entry.state === "passed",
      })),
    );
    const file =
      this.#asked ??
      (this.#entries.length >= KEPT_FROM_FILES
        ? keptTimeline(
            machineCache("timelines"),
            this.#runStart,
            new Set(this.#entries.map((entry) => entry.project)).size > 1 ? "whole" : "part",
          )
        : undefined);
    if (file) writeFileSync(file, `${JSON.stringify(this.#entries, null, 1)}\n`);
  }
}

/** Runs of fewer files (one file being worked on) keep no timeline of their own. */
const KEPT_FROM_FILES = 3;
const KEPT_RUNS = 10;

/**
 * A new file in `folder` (the cache's `timelines/`) named by the run's start and its kind, the oldest of that kind beyond the
 * last ten removed: runs of several projects (`npm test`, CI's) are `whole`, one project's are `part`, so a day of
 * work on one project does not push out the last whole run.
 */
export function keptTimeline(folder: string, runStart: number, kind: "whole" | "part"): string {
  mkdirSync(folder, { recursive: true });
  // Files from before kinds were named count as whole runs (they were mostly CI's).
  const ofKind = (name: string) => (name.startsWith("part-") ? "part" : "whole");
  const earlier = readdirSync(folder)
    .filter((name) => name.endsWith(".json") && ofKind(name) === kind)
    .sort((a, b) => a.replace(/^(whole|part)-/, "").localeCompare(b.replace(/^(whole|part)-/, "")));
  for (const name of earlier.slice(0, Math.max(0, earlier.length - (KEPT_RUNS - 1))))
    rmSync(join(folder, name), { force: true });
  return join(folder, `${kind}-${new Date(runStart).toISOString().replaceAll(":", "-")}.json`);
}
