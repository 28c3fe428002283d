/**
 * How long each test file took the last time it passed on this machine, kept in the machine's cache by the timeline
 * reporter and read by the sequencer. Vitest's own cache keeps the last duration whatever the outcome, so one failed
 * run (a file waiting out its timeouts: capi-backend's 40 minutes in CI, 2026-11-29) made the sequencer push every
 * later holder of that file's lock to the end of the next run.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { machineCache } from "./machine-cache.ts";

/** A file's duration of one run: its project, its path from the repository's root, milliseconds, and whether it passed. */
export interface FileDuration {
  readonly project: string;
  readonly file: string;
  readonly ms: number;
  readonly passed: boolean;
}

type Durations = Record<string, number>;

const keyOf = (project: string, file: string) => `${project} ${file}`;

/** Where they are kept (a JSON object, `<project> <file>` → milliseconds). */
export const passedDurationsFile = () => machineCache("durations-passed.json");

function read(path: string): Durations {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Durations;
  } catch {
    return {}; // none yet, or a file cut short: the next passing run writes it whole
  }
}

/** Adds the durations of the files of `run` that passed to those kept; a failed file keeps its last passing one. */
export function recordPassedDurations(run: readonly FileDuration[], path = passedDurationsFile()): void {
  const kept = read(path);
  for (const entry of run) if (entry.passed) kept[keyOf(entry.project, entry.file)] = Math.round(entry.ms);
  mkdirSync(dirname(path), { recursive: true });
  // Whole or not at all, and two runs at once (a file run beside the suite) never share the file being written.
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, `${JSON.stringify(kept, null, 1)}\n`);
  renameSync(partial, path);
}

/** The kept durations, as a lookup by project and file (undefined for a file that never passed here). */
export function passedDurations(
  path = passedDurationsFile(),
): (project: string, file: string) => number | undefined {
  const kept = read(path);
  return (project, file) => kept[keyOf(project, file)];
}
