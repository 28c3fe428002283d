/**
 * The order test files start in, so that files which hold a machine-wide lock never wait on each other, files
 * that boot many kind nodes never boot them side by side, and at most two files keep Docker nodes at once (a lock of
 * two slots, machine-locks.ts). The files that start Cluster API's Docker provider (CAPD)
 * take one lock per machine (its fixed ports); two of them started side by side leave one worker waiting for the
 * lock for minutes. The files that run several kind clusters at once share the machine's two cores with every node
 * they boot: two of them side by side have left kubeadm timing out on a new node (CI, 2026-11-26). Vitest hands
 * files to whichever worker is free, in the order the sequencer gives; this sequencer plays the workers forward on
 * the durations of the last run and, whenever a worker is free, starts the file that holds the run back longest
 * (a lock's holder counts for its whole chain of holders still to run) among those that would not start beside
 * another holder of their lock; ties keep vitest's order (failed first, then slowest first). On a fresh machine the
 * heavy files come after the others, while their assets build, in the order the stages they need are made.
 */
import { existsSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { HEAVY_STAGES, heavyAssetsBuiltMarker, lastStageNeededBy } from "./heavy-assets.ts";
import { locksOf, slotsOf } from "./machine-locks.ts";
import { passedDurations } from "./passed-durations.ts";

/** What a file without a recorded duration (a fresh machine) is taken to last, so that locks still keep apart. */
export const UNKNOWN_DURATION_MS = 120_000;

/**
 * `files` in an order in which, played on `workers` workers that each take the next file when free, no file starts
 * while every slot of one of its locks is held, as far as the durations tell, and a lock's chain of holders starts
 * as early as it can (it bounds the run); otherwise `files`' order.
 */
export function lockHoldersApart<T>(
  files: readonly T[],
  props: {
    workers: number;
    durationOf: (file: T) => number;
    locksOf: (file: T) => readonly string[];
    /** How many files may hold a lock at once (default 1). */
    slotsOf?: (lock: string) => number;
  },
): T[] {
  const left = [...files];
  const slotsOf = props.slotsOf ?? (() => 1);
  const freeAt: number[] = Array.from({ length: Math.max(1, props.workers) }, () => 0);
  // When each slot of each lock is free again.
  const slotFreeAt = new Map<string, number[]>();
  const slotsFreeAt = (lock: string) => {
    const known = slotFreeAt.get(lock) ?? Array.from({ length: Math.max(1, slotsOf(lock)) }, () => 0);
    slotFreeAt.set(lock, known);
    return known;
  };
  const startOf = (file: T, now: number) =>
    Math.max(now, ...props.locksOf(file).map((lock) => Math.min(...slotsFreeAt(lock))));
  const order: T[] = [];
  while (left.length > 0) {
    const worker = freeAt.indexOf(Math.min(...freeAt));
    const now = freeAt[worker] ?? 0;
    // What holds the run back longest goes first: a lock's holders run one after another (spread over its
    // slots), so each counts for the time all holders of its lock still need (the critical path), any other file
    // for its own duration.
    const chains = new Map<string, number>();
    for (const file of left) {
      for (const lock of props.locksOf(file))
        chains.set(lock, (chains.get(lock) ?? 0) + props.durationOf(file) / Math.max(1, slotsOf(lock)));
    }
    let next = 0;
    let heaviest = -1;
    left.forEach((file, index) => {
      if (startOf(file, now) > now) return;
      const weight = Math.max(
        props.durationOf(file),
        ...props.locksOf(file).map((lock) => chains.get(lock) ?? 0),
      );
      if (weight <= heaviest) return;
      next = index;
      heaviest = weight;
    });
    const [file] = left.splice(next, 1) as [T];
    const start = startOf(file, now);
    const end = start + props.durationOf(file);
    freeAt[worker] = end;
    for (const lock of props.locksOf(file)) {
      const slots = slotsFreeAt(lock);
      slots[slots.indexOf(Math.min(...slots))] = end;
    }
    order.push(file);
  }
  return order;
}

export default class MachineLockSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // The last passing run's duration first (a failed run's says how long its timeouts were), then vitest's.
    const passed = passedDurations();
    const durationOf = (spec: TestSpecification) =>
      passed(spec.project.name, relative(spec.project.config.root, spec.moduleId)) ??
      this.ctx.cache.getTestSpecificationResult(spec)?.duration ??
      UNKNOWN_DURATION_MS;
    const play = (specs: TestSpecification[]) =>
      lockHoldersApart(specs, {
        workers: specs[0]?.project.config.maxWorkers ?? 1,
        durationOf,
        locksOf: (spec) => locksOf(spec.moduleId),
        slotsOf,
      });
    // Warm, the heavy files start with the others (the longest lock chain from the first minute); cold, they would
    // only hold workers while their assets build, so they come after every other file, in the order their stages
    // are made.
    const warm = existsSync(heavyAssetsBuiltMarker());
    // Groups run one after another, each on the pool: play each group alone.
    const groups = new Map<number, TestSpecification[]>();
    for (const spec of sorted) {
      const order = spec.project.config.sequence.groupOrder;
      groups.set(order, [...(groups.get(order) ?? []), spec]);
    }
    return [...groups.values()].flatMap((group) => {
      if (warm) return play(group);
      const isHeavy = (spec: TestSpecification) => spec.project.name === "heavy";
      const heavy = group.filter(isHeavy);
      return [
        ...play(group.filter((spec) => !isHeavy(spec))),
        ...HEAVY_STAGES.flatMap((stage) =>
          play(heavy.filter((spec) => lastStageNeededBy(spec.moduleId) === stage)),
        ),
      ];
    });
  }
}
