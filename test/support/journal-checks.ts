/**
 * Pure checks over the calls of a backend journal (journaling-backend.ts): did two replicas act on one
 * cluster at once, how often was each cluster created, and when did a cluster move between replicas. No I/O, so they are unit-tested on hand-made
 * journals and trusted on real ones.
 */
import type { BackendCall } from "./journaling-backend.ts";

/** Two calls about one cluster by different replicas whose time spans overlap; `first` began no later. */
export interface OverlappingCalls {
  readonly cluster: string;
  readonly first: BackendCall;
  readonly second: BackendCall;
}

/** What {@link overlappingCalls} counts. */
export interface OverlapOptions {
  /**
   * When each killed replica was killed (ms since the epoch, as Date.now() tells it), by replica name, or by
   * `name/pid` for one process of a replica started again under the same name (which wins over the name's).
   */
  readonly killedAt?: Readonly<Record<string, number>>;
  /**
   * Count two calls of one replica as well: one engine never runs two reconciles of one Cluster at once,
   * so its own calls about a cluster never overlap either. Default false: only different replicas.
   */
  readonly sameReplica?: boolean;
}

/**
 * Every pair of calls about one cluster, by different replicas, whose [start, end] spans overlap.
 *
 * Across processes, spans are in milliseconds and closed: calls that touch in one millisecond count, since
 * Date.now() cannot order them. Within one process, the journal's line order decides exactly (a call that
 * ends and the next that begins in the same millisecond do not overlap).
 * A call without an end lasts until its replica's kill time in `killedAt` if it began before it (it was
 * cut off by the kill), else for ever (it is still running, e.g. in a replica started again under the same
 * name). Calls about no cluster never count.
 */
export function overlappingCalls(
  calls: readonly BackendCall[],
  options: OverlapOptions = {},
): OverlappingCalls[] {
  const killedAt = options.killedAt ?? {};
  const endOf = (call: BackendCall): number => {
    if (call.end !== undefined) return call.end;
    const killed = killedAt[`${call.replica}/${call.pid}`] ?? killedAt[call.replica];
    return killed !== undefined && call.start <= killed ? killed : Number.POSITIVE_INFINITY;
  };
  const overlap = (first: BackendCall, second: BackendCall): boolean =>
    first.pid === second.pid && first.replica === second.replica
      ? first.startSeq < (second.endSeq ?? Number.POSITIVE_INFINITY) &&
        second.startSeq < (first.endSeq ?? Number.POSITIVE_INFINITY)
      : second.start <= endOf(first) && first.start <= endOf(second);
  const overlaps: OverlappingCalls[] = [];
  for (const [cluster, ofCluster] of byCluster(calls)) {
    const ordered = [...ofCluster].sort((a, b) => a.start - b.start);
    ordered.forEach((first, i) => {
      for (const second of ordered.slice(i + 1)) {
        // Ordered by start: no later call overlaps `first` once one starts after it ended.
        if (second.start > endOf(first)) break;
        if (!options.sameReplica && second.replica === first.replica) continue;
        if (overlap(first, second)) overlaps.push({ cluster, first, second });
      }
    });
  }
  return overlaps;
}

/** How many `create` calls returned successfully, per cluster; a cluster with none is absent. */
export function createsPerCluster(calls: readonly BackendCall[]): Map<string, number> {
  const creates = new Map<string, number>();
  for (const call of calls) {
    if (call.method !== "create" || call.ok !== true || call.cluster === null) continue;
    creates.set(call.cluster, (creates.get(call.cluster) ?? 0) + 1);
  }
  return creates;
}

/** A cluster going from one replica to another: `to` made a call about it after `from` had. */
export interface Handover {
  readonly cluster: string;
  readonly from: string;
  readonly to: string;
  /** When `to` began its first call of the new stretch (ms since the epoch). */
  readonly at: number;
}

/**
 * Every handover in the journal: per cluster, its calls in the order they began, and each time the
 * replica making them changes. A cluster worked by one replica throughout has none.
 */
export function handovers(calls: readonly BackendCall[]): Handover[] {
  const moves: Handover[] = [];
  for (const [cluster, ofCluster] of byCluster(calls)) {
    const ordered = [...ofCluster].sort((a, b) => a.start - b.start || a.startSeq - b.startSeq);
    ordered.forEach((call, i) => {
      const before = ordered[i - 1];
      if (before && before.replica !== call.replica)
        moves.push({ cluster, from: before.replica, to: call.replica, at: call.start });
    });
  }
  return moves;
}

function byCluster(calls: readonly BackendCall[]): Map<string, BackendCall[]> {
  const aboutClusters = calls.filter(
    (call): call is BackendCall & { cluster: string } => call.cluster !== null,
  );
  return Map.groupBy(aboutClusters, (call) => call.cluster);
}
