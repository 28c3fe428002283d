/** What a provider backend reports about one cluster, and the commands the Cluster machine gives it. */
import type { JsonObject } from "./common.ts";
import type { SnapshotReference, SnapshotRejectedError } from "./control-plane-snapshot.ts";
import type { FailureDomain } from "./engine-cluster.ts";

/** The cluster a command or observation is about: the Cluster object and what it asks for. */
export interface ClusterTarget {
  /** `metadata.uid` of the Cluster; backends key their clusters by it, so a re-created object gets a new cluster. */
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  /** Name of the ClusterProfile and of the ProviderConfig it came from. */
  /** `spec.tenancy`: whether the cluster serves one ClusterRequest or several. */
  readonly tenancy: "Exclusive" | "Shared";
  readonly profile: string;
  readonly providerConfig: string;
  /** `spec.settings` of that ProviderConfig: backend-specific, validated by the backend. */
  readonly settings?: JsonObject;
  /**
   * The Cluster's labels and annotations (contract 1.1), for backends that carry some along (e.g. openMCP's
   * `metadata.open-control-plane.io/*`) or read per-Cluster choices from them.
   */
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  /**
   * The Cluster's `spec.clusterConfigs` as the runtime read them (contract 1.2), in the Cluster's order, for a
   * backend that declares which kind they are (`clusterConfigResource`): each named object's `spec`, or `found:
   * false` when no such object exists in the Cluster's namespace. Absent when the Cluster names none.
   */
  readonly clusterConfigs?: readonly ResolvedClusterConfig[];
  /**
   * Given with `create` only (contract 1.7), for a Cluster made from a snapshot (a clone): a backend that has
   * `snapshot`/`restore` makes the new cluster from this snapshot — its data, its certificate authority and its
   * service-account keys, so kubeconfigs and tokens of the original work against it too — instead of an empty one;
   * it checks the snapshot first (throwing {@link SnapshotRejectedError}) and ignores the field once the cluster exists.
   * The clone's own identity differs where it must: its uid (the backend's key) and its endpoint.
   */
  readonly restoreFrom?: SnapshotReference;
}

/** One entry of a Cluster's `spec.clusterConfigs`, read from the management cluster by the runtime. */
export type ResolvedClusterConfig =
  | { readonly name: string; readonly found: true; readonly spec: JsonObject }
  | { readonly name: string; readonly found: false };

/**
 * A condition a backend reports about its cluster (contract 1.1), shown as it is among the Cluster's conditions:
 * e.g. Gardener's Shoot conditions, for people who see every Cluster condition (an openMCP ControlPlane shows
 * them). `type` is the backend's own (prefixed so it never clashes with the engine's, e.g. `ShootControlPlaneHealthy`);
 * `reason` CamelCase; never a secret.
 */
export interface BackendCondition {
  readonly type: string;
  readonly status: "True" | "False" | "Unknown";
  readonly reason: string;
  readonly message: string;
}

/**
 * Where a backend's cluster is in its own lifecycle. `hibernating`, `hibernated` and `waking` (contract 1.6) are
 * reported only by a backend that offers hibernation (`hibernate`/`wake`), for a cluster it was asked to put to
 * sleep: stopping, asleep (its data, certificates and endpoint kept, nothing serving) and starting again. None of
 * the three serves; a cluster stopped by anyone else is not `hibernated` (e.g. `provisioning` with a message).
 */
export type BackendPhase =
  | "provisioning"
  | "ready"
  | "updating"
  | "deleting"
  | "failed"
  | "hibernating"
  | "hibernated"
  | "waking";

/** The phases of a cluster asleep or on its way to or from sleep (contract 1.6): none serves. */
export const HIBERNATION_PHASES: readonly BackendPhase[] = ["hibernating", "hibernated", "waking"];

/** Whether `observation` reports a cluster asleep or on its way to or from sleep (contract 1.6). */
export const isHibernationPhase = (observation: ClusterObservation): boolean =>
  observation.exists && HIBERNATION_PHASES.includes(observation.phase);

/** A read-only look at one cluster at the backend. */
export type ClusterObservation =
  | { readonly exists: false }
  | {
      readonly exists: true;
      readonly phase: BackendPhase;
      /** Kubernetes version the cluster runs (or is being built with). */
      readonly version: string;
      /** URL of the cluster's API server, once known: as the host reaches it (`apiserver-external`). */
      readonly endpoint?: string;
      /**
       * URL of the API server as Pods of sibling clusters reach it, where that differs (e.g. a kind node's
       * address on the Docker network); published as `apiserver-internal` (contract 1.4).
       */
      readonly internalEndpoint?: string;
      /** One line for people (`kubectl get clusters -o wide`); never a secret. */
      readonly info?: string;
      /**
       * The namespaces an admin kubeconfig of this cluster is limited to, for a backend whose admin access is
       * namespaced (its `adminAccess` returns `scope.namespaces`), so the Cluster's status names its tenant's
       * namespaces without anyone asking for a kubeconfig (contract 1.6). Absent: cluster-wide, or not said.
       */
      readonly adminNamespaces?: readonly string[];
      /** Why the cluster is `failed`, for a person to act on. */
      readonly message?: string;
      /**
       * The cluster exists but is not whole (e.g. a part of it was deleted by hand): what is missing, for a
       * person (contract 1.2). The engine calls `create` again, which must make what is missing and keep what
       * is there, and shows the message on the Cluster meanwhile. Never reported for a cluster being deleted.
       */
      readonly incomplete?: string;
      /**
       * The cluster runs the wanted version but differs from what the target asks otherwise (e.g. labels or a
       * template changed since it was made): the engine orders an `update` at the same version (contract 1.1).
       * A backend reports it only for what an update can fix, so the engine never updates in a loop. On a
       * `failed` cluster it says the cluster failed with what its target no longer asks (e.g. settings a deleted
       * settings Rollout gave it): the Cluster engine orders an `update` to what it asks now, which may repair it.
       */
      readonly outOfDate?: boolean;
      /** Conditions of the backend's own, mirrored onto the Cluster (contract 1.1). */
      readonly conditions?: readonly BackendCondition[];
      /** Where the cluster's machines may go, if the backend has such places (Cluster API shows them). */
      readonly failureDomains?: readonly FailureDomain[];
    };

/** Something the Cluster machine wants the backend to do. Every command is idempotent. */
export type ClusterCommand =
  | { readonly kind: "create"; readonly target: ClusterTarget; readonly version: string }
  | { readonly kind: "update"; readonly target: ClusterTarget; readonly version: string }
  | { readonly kind: "delete"; readonly target: ClusterTarget };
