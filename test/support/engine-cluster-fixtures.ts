/** Fixtures for pure EngineCluster step tests: stored EngineClusters, observations, step input. */
import type { ClusterObservation } from "../../src/api/backend.ts";
import type { EngineCluster } from "../../src/api/engine-cluster.ts";
import type { CapiOwnedPublication } from "../../src/machines/capi-owned/contract.ts";
import type { EngineClusterStepInput } from "../../src/machines/engine-cluster/contract.ts";
import * as builders from "./builders.ts";
import { aProfile, NOW, PROVIDER, TIMING } from "./cluster-fixtures.ts";

export { capiOwner } from "./builders.ts";
export { CLAIMANT, NOW, PROVIDER, TIMING } from "./cluster-fixtures.ts";

/** An EngineCluster of {@link builders.anEngineCluster} as the API server holds it; owned by CAPI Cluster `workload` unless `owned` is false. */
export function anEngineCluster(
  props: Pick<builders.EngineClusterProps, "annotations" | "finalizers" | "version"> & {
    owned?: boolean;
  } = {},
): EngineCluster {
  const { owned, ...rest } = props;
  return builders.stored(
    builders.anEngineCluster({ ...rest, ...(owned === false ? {} : { owner: "workload" }) }),
    {
      uid: "e0000000-0000-4000-8000-000000000001",
    },
  );
}

/** Nothing published yet (the backend gives admin access). */
export const unpublished: CapiOwnedPublication = { kubeconfig: "missing", endpointCurrent: false };
export const published: CapiOwnedPublication = { kubeconfig: "current", endpointCurrent: true };

export const readyBackend = (
  endpoint = "https://127.0.0.1:6443",
): Extract<ClusterObservation, { exists: true }> => ({
  exists: true,
  phase: "ready",
  version: "1.33.3",
  endpoint,
});

/** Step input with defaults: our profile (the step is only given EngineClusters that are ours and not paused). */
export function engineInput(
  cluster: EngineCluster,
  backend: ClusterObservation,
  publication: CapiOwnedPublication = unpublished,
  extra: Partial<EngineClusterStepInput> = {},
): EngineClusterStepInput {
  return {
    cluster,
    profile: aProfile(),
    providerName: PROVIDER,
    observation: { backend, publication },
    now: NOW,
    timing: TIMING,
    ...extra,
  };
}
