/** How often a schedule over selected Clusters (HibernationSchedule, ClusterSnapshotSchedule) looks again. */
import type { RequeueTiming } from "../../../machines/shared/machine-tags.ts";

/**
 * A schedule at rest looks again at its next time due, and at least every 10 minutes (which also bounds how late a
 * timer may be after a clock jump); acting on the Clusters is polled every second, retried after 5 s.
 */
export const DEFAULT_SCHEDULE_TIMING: RequeueTiming = { pollMs: 1_000, retryMs: 5_000, resyncMs: 600_000 };
