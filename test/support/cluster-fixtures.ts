/** Fixtures for pure Cluster step tests: stored Clusters and profiles (made by builders.ts), observations, step input. */
import type { ClusterObservation } from "../../src/api/backend.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterProfile } from "../../src/api/cluster-profile.ts";
import type { ClusterStepInput } from "../../src/machines/cluster/step.ts";
import * as builders from "./builders.ts";

export const PROVIDER = "engine-test";
/** The engine the fixtures are made for: its profiles are named `test.engine-test.<config>`. */
export const CLAIMANT = {
  providerName: PROVIDER,
  environment: "test",
  claimedProfiles: new Set<string>(),
} as const;
export const TIMING = { pollMs: 1_000, retryMs: 30_000, resyncMs: 600_000 } as const;
export const NOW = "2026-11-21T10:00:00Z";

/** A Cluster of {@link builders.aCluster} as the API server holds it (uid, generation 1, resourceVersion 100). */
export function aCluster(
  props: Pick<builders.ClusterProps, "version" | "profile" | "finalizers"> = {},
): Cluster {
  return builders.stored(builders.aCluster(props));
}

/** A profile of ours (or of `provider`) offering 1.33.3, 1.33.2 (deprecated) and 1.32.7. */
export function aProfile(provider = PROVIDER): ClusterProfile {
  return builders.aClusterProfile({ provider, name: "test.engine-test.small" });
}

export const absent: ClusterObservation = { exists: false };
export const provisioningAt = (version: string): ClusterObservation => ({
  exists: true,
  phase: "provisioning",
  version,
});
export const readyAt = (version: string, endpoint = "https://127.0.0.1:6443"): ClusterObservation => ({
  exists: true,
  phase: "ready",
  version,
  endpoint,
  info: `simulated ${version}`,
});

/** Step input with defaults. */
export function input(
  cluster: Cluster,
  observation: ClusterObservation,
  extra: Partial<ClusterStepInput> = {},
) {
  return {
    cluster,
    profile: aProfile(),
    providerName: PROVIDER,
    observation,
    now: NOW,
    timing: TIMING,
    ...extra,
  } satisfies ClusterStepInput;
}
