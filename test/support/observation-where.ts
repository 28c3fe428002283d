/** Waiting on a backend directly (no engine): observe a cluster until the observation says what the test awaits. */
import type { ClusterObservation, ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { type EventuallyOptions, eventually, satisfying } from "./eventually.ts";

/**
 * The backend's observation of `cluster` once `wanted` holds for it; fails with the last observation.
 * `options.what` defaults to the cluster's name and the predicate's source.
 */
export const observationWhere = (
  backend: ClusterBackend,
  cluster: ClusterTarget,
  wanted: (observation: ClusterObservation) => boolean,
  options: EventuallyOptions = {},
): Promise<ClusterObservation> =>
  eventually(async () => satisfying(await backend.observe(cluster), wanted), {
    what: `the backend's observation of ${cluster.name}: ${String(wanted)}`,
    ...options,
  });
