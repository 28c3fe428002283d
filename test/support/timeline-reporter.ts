/**
 * With `OPENMCP_TEST_TIMELINE=<file>`, writes when each test file started and ended on which worker, with the
 * setup, import and test time inside it: the suite's own timeline, to see where workers stood idle (vitest's JSON
 * report dates a file from its first test, after its `beforeAll`). Without the variable it does nothing.
 */
import { writeFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";

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
  /** Each test of the file that ran, with its own duration (what a file's time is made of). */
  readonly cases: readonly { readonly name: string; readonly seconds: number }[];
}

export default class TimelineReporter implements Reporter {
  readonly #file = process.env[TIMELINE_ENV];
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
    if (!this.#file) return;
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
      cases: [...module.children.allTests()].flatMap((test) => {
        const duration = test.diagnostic()?.duration;
        return duration === undefined ? [] : [{ name: test.fullName, seconds: seconds(duration) }];
      }),
    });
  }

  onTestRunEnd(): void {
    if (this.#file) writeFileSync(this.#file, `${JSON.stringify(this.#entries, null, 1)}\n`);
  }
}
