/** Builders for Clusters, profiles and observations, and an in-memory API server stand-in for pure step tests. */
import type { ClusterObservation } from "../../src/api/backend.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterProfile } from "../../src/api/cluster-profile.ts";
import { CLUSTERS_API_VERSION } from "../../src/api/constants.ts";
import type { ClusterStepInput, ClusterStepResult } from "../../src/machines/cluster/step.ts";
import { applied as withOperations } from "../../src/machines/shared/json-patch.ts";

export const PROVIDER = "engine-test";
export const TIMING = { pollMs: 1_000, retryMs: 30_000, resyncMs: 600_000 } as const;
export const NOW = "2026-11-21T10:00:00Z";

/** A Cluster as a user would apply it, after the API server filled in uid, generation and resourceVersion. */
export function aCluster(
  overrides: { version?: string; profile?: string; finalizers?: string[] } = {},
): Cluster {
  return {
    apiVersion: CLUSTERS_API_VERSION,
    kind: "Cluster",
    metadata: {
      name: "my-cluster",
      namespace: "my-namespace",
      uid: "4a1e6f0e-0000-4000-8000-000000000001",
      generation: 1,
      resourceVersion: "100",
      ...(overrides.finalizers ? { finalizers: overrides.finalizers } : {}),
    },
    spec: {
      profile: overrides.profile ?? "test.engine-test.small",
      tenancy: "Shared",
      ...(overrides.version ? { kubernetes: { version: overrides.version } } : {}),
    },
  };
}

/** A profile of ours (or of `provider`) offering 1.33.3, 1.33.2 (deprecated) and 1.32.7. */
export function aProfile(provider = PROVIDER): ClusterProfile {
  return {
    apiVersion: CLUSTERS_API_VERSION,
    kind: "ClusterProfile",
    metadata: { name: "test.engine-test.small" },
    spec: {
      providerRef: { name: provider },
      providerConfigRef: { name: "small" },
      supportedVersions: [
        { version: "1.33.3" },
        { version: "1.33.2", deprecated: true },
        { version: "1.32.7" },
      ],
    },
  };
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

/** What the API server would hold after both patches of a step (resourceVersion bumped once per write). */
export function applied(cluster: Cluster, result: ClusterStepResult): Cluster {
  let next = cluster;
  for (const patch of [result.statusPatch, result.metadataPatch]) {
    if (patch.length === 0) continue;
    next = withOperations(next, patch);
    next = {
      ...next,
      metadata: { ...next.metadata, resourceVersion: String(Number(next.metadata.resourceVersion) + 1) },
    };
  }
  return next;
}
