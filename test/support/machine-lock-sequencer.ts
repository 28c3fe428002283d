/**
 * The order test files start in, so that files which hold a machine-wide lock never wait on each other. The files
 * that start Cluster API's Docker provider (CAPD) take one lock per machine (its fixed ports); two of them started
 * side by side leave one worker waiting for the lock for minutes. Vitest hands files to whichever worker is free, in
 * the order the sequencer gives; this sequencer keeps vitest's order (failed first, then slowest first, by the
 * durations of the last run) but plays the workers forward on those durations and, where the next lock holder
 * would wait, starts the next file that would not.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The test files that take the machine's CAPD lock (they start Cluster API through test/support/capi-management.ts). */
export const CAPD_LOCK_HOLDERS = ["capi-backend.heavy.test.ts", "capi-backend.conformance.heavy.test.ts"];

/**
 * `files` in an order in which, played on `workers` workers that each take the next file when free, no file for
 * which `holdsLock` is true starts while another one runs, as far as the durations tell; otherwise `files`' order.
 */
export function lockHoldersApart<T>(
  files: readonly T[],
  props: { workers: number; durationOf: (file: T) => number; holdsLock: (file: T) => boolean },
): T[] {
  const left = [...files];
  const freeAt: number[] = Array.from({ length: Math.max(1, props.workers) }, () => 0);
  let lockFreeAt = 0;
  const order: T[] = [];
  while (left.length > 0) {
    const worker = freeAt.indexOf(Math.min(...freeAt));
    const now = freeAt[worker] ?? 0;
    const next = Math.max(
      0,
      left.findIndex((file) => !props.holdsLock(file) || lockFreeAt <= now),
    );
    const [file] = left.splice(next, 1) as [T];
    const start = props.holdsLock(file) ? Math.max(now, lockFreeAt) : now;
    freeAt[worker] = start + props.durationOf(file);
    if (props.holdsLock(file)) lockFreeAt = freeAt[worker];
    order.push(file);
  }
  return order;
}

export default class MachineLockSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const durationOf = (spec: TestSpecification) =>
      this.ctx.cache.getTestSpecificationResult(spec)?.duration ?? 0;
    const holdsLock = (spec: TestSpecification) =>
      CAPD_LOCK_HOLDERS.some((name) => spec.moduleId.endsWith(`/${name}`));
    // Groups run one after another, each on the pool: play each group alone.
    const groups = new Map<number, TestSpecification[]>();
    for (const spec of sorted) {
      const order = spec.project.config.sequence.groupOrder;
      groups.set(order, [...(groups.get(order) ?? []), spec]);
    }
    return [...groups.values()].flatMap((group) =>
      lockHoldersApart(group, {
        workers: group[0]?.project.config.maxWorkers ?? 1,
        durationOf,
        holdsLock,
      }),
    );
  }
}
