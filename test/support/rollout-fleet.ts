/**
 * A fleet of Clusters in memory for the Rollout's pure step: the step's commands are applied as the runtime applies
 * them (a write guarded by the resourceVersion the step decided on), and each Cluster then moves as the Cluster
 * machine would (Ready at its new generation, or failed), as a test says. No API server, no engine.
 */
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterProfile } from "../../src/api/cluster-profile.ts";
import type { Rollout, RolloutSpec, RolloutStage } from "../../src/api/rollout.ts";
import type { RolloutCommand } from "../../src/machines/rollout/step.ts";

/** The namespace of every fleet. */
export const FLEET_NAMESPACE = "team";

/** One Cluster of the fleet, Ready at `version`. */
export function fleetCluster(name: string, version: string, labels: Record<string, string> = {}): Cluster {
  return {
    apiVersion: "clusters.openmcp.cloud/v1alpha1",
    kind: "Cluster",
    metadata: {
      name,
      namespace: FLEET_NAMESPACE,
      uid: `uid-${name}`,
      generation: 1,
      resourceVersion: "1",
      labels,
    },
    spec: { profile: "p", tenancy: "Exclusive", kubernetes: { version } },
    status: { phase: "Ready", observedGeneration: 1, providerStatus: { state: "ready" } },
  } as Cluster;
}

/** The fleet's ClusterProfile `p`, offering `versions`. */
export function fleetProfile(versions: readonly string[]): ClusterProfile {
  return {
    apiVersion: "clusters.openmcp.cloud/v1alpha1",
    kind: "ClusterProfile",
    metadata: { name: "p" },
    spec: {
      providerRef: { name: "sim" },
      providerConfigRef: { name: "sim" },
      supportedVersions: versions.map((version) => ({ version })),
    },
  } as ClusterProfile;
}

/**
 * A Rollout to `version` with a canary of 1 and at most 2 unavailable, in stages: the Clusters labelled `ring: "1"`
 * first (stage `ring1`), then `between`, then the rest (stage `rest`).
 */
export const ringOneFirst = (version: string, ...between: RolloutStage[]): RolloutSpec => ({
  version,
  canary: 1,
  maxUnavailable: 2,
  stages: [
    { name: "ring1", selector: { matchLabels: { ring: "1" } } },
    ...between,
    { name: "rest", share: 100 },
  ],
});

/** A Rollout of the fleet's namespace. */
export function fleetRollout(spec: RolloutSpec, status?: Rollout["status"]): Rollout {
  return {
    apiVersion: "engine.openmcp.cloud/v1alpha1",
    kind: "Rollout",
    metadata: { name: "r", namespace: FLEET_NAMESPACE, uid: "rollout-uid", generation: 1 },
    spec,
    ...(status ? { status } : {}),
  } as Rollout;
}

/** The Clusters of a fleet, and how often each (by uid) was given a new version. */
export class Fleet {
  readonly clusters = new Map<string, Cluster>();
  readonly writes = new Map<string, number>();
  /** The order in which Clusters were written. */
  readonly written: string[] = [];

  constructor(clusters: readonly Cluster[]) {
    for (const cluster of clusters) this.clusters.set(cluster.metadata.name ?? "", cluster);
  }

  list(): Cluster[] {
    return [...this.clusters.values()];
  }

  /**
   * Applies a command as the runtime does: each write only on the resourceVersion it was decided on (snapshots and a
   * settings run's end, the write of its ProviderConfig, are not the fleet's).
   */
  apply(command: RolloutCommand): void {
    if (command.kind !== "change") return;
    for (const change of command.clusters) {
      const cluster = this.clusters.get(change.name);
      if (!cluster || cluster.metadata.uid !== change.uid) continue;
      if (cluster.metadata.resourceVersion !== change.resourceVersion) continue; // a conflict: nothing written
      this.#put({
        ...cluster,
        metadata: {
          ...cluster.metadata,
          // Annotations alone leave the generation as it is (a settings-only run).
          generation: (cluster.metadata.generation ?? 0) + (command.version === undefined ? 0 : 1),
          annotations: {
            ...cluster.metadata.annotations,
            "engine.openmcp.cloud/changed-by-rollout": command.changedBy,
            ...(command.settings ? { "engine.openmcp.cloud/settings-from-rollout": command.changedBy } : {}),
          },
        },
        spec: {
          ...cluster.spec,
          ...(command.version === undefined ? {} : { kubernetes: { version: command.version } }),
        },
      });
      this.writes.set(change.uid, (this.writes.get(change.uid) ?? 0) + 1);
      this.written.push(change.name);
    }
  }

  /** The Cluster machine having seen its spec: Ready at it, or failed. */
  settle(name: string, outcome: "ready" | "failed", settingsHash?: string): void {
    const cluster = this.clusters.get(name);
    if (!cluster) return;
    this.#put({
      ...cluster,
      status: {
        ...cluster.status,
        observedGeneration: cluster.metadata.generation ?? 0,
        phase: outcome === "ready" ? "Ready" : "Progressing",
        providerStatus: { state: outcome, ...(settingsHash ? { settingsHash } : {}) },
        conditions:
          outcome === "failed"
            ? [
                {
                  type: "ClusterReady",
                  status: "False",
                  reason: "BackendFailed",
                  message: "the backend reports the cluster failed",
                  lastTransitionTime: "2026-01-01T00:00:00Z",
                },
              ]
            : [],
      },
    });
  }

  /** The Cluster not Ready for a reason of its own (e.g. still being made), at its current generation. */
  notReady(name: string): void {
    const cluster = this.clusters.get(name);
    if (!cluster) return;
    this.#put({
      ...cluster,
      status: {
        observedGeneration: cluster.metadata.generation ?? 0,
        phase: "Progressing",
        providerStatus: { state: "provisioning" },
      },
    });
  }

  /** Whether the Cluster is changing: its spec newer than what its status has seen. */
  changing(name: string): boolean {
    const cluster = this.clusters.get(name);
    return (cluster?.status?.observedGeneration ?? 0) < (cluster?.metadata.generation ?? 0);
  }

  remove(name: string): void {
    this.clusters.delete(name);
  }

  #put(cluster: Cluster): void {
    const version = String(Number(cluster.metadata.resourceVersion ?? "0") + 1);
    this.clusters.set(cluster.metadata.name ?? "", {
      ...cluster,
      metadata: { ...cluster.metadata, resourceVersion: version },
    });
  }
}
