/**
 * A Cluster as a Cluster API topology Cluster (cluster.x-k8s.io/v1beta2 with `spec.topology`): its name, the CAPI
 * Cluster the engine wants, the smallest merge patch that gets an existing one there, what Cluster API's status
 * says about the cluster, and what a ClusterClass offers. Pure.
 */

import { createHash } from "node:crypto";
import type { BackendCondition, BackendPhase, ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type { PoolMemberSpec } from "../api/backend-contract.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { JsonObject, JsonValue, ObjectMeta } from "../api/common.ts";
import {
  CAPI_HIBERNATED_REPLICAS_ANNOTATION,
  CAPI_WAKING_REPLICAS_ANNOTATION,
} from "../api/constants/hibernation.ts";
import { ENGINE_GROUP } from "../api/constants.ts";
import { compareVersions, parseVersion } from "../machines/backend-cluster/kubernetes-version.ts";
import type { CapiSettings, CapiVariable, CapiWorkerPool } from "./capi-settings.ts";
import { containedIn, copiedEntries, mergePatch } from "./shared/merge-patch.ts";

/** Labels and annotations the backend writes on CAPI Clusters. */
export const CAPI_BACKEND_KEYS = {
  /** The openMCP Cluster's uid (a label: the backend lists its CAPI Clusters by it). */
  clusterUidLabel: `${ENGINE_GROUP}/cluster-uid`,
  /** The openMCP Cluster's namespace and name, as labels for `kubectl get -l`. */
  clusterNamespaceLabel: `${ENGINE_GROUP}/cluster-namespace`,
  clusterNameLabel: `${ENGINE_GROUP}/cluster-name`,
  /** The ProviderConfig it was made from. */
  providerConfigLabel: `${ENGINE_GROUP}/provider-config`,
  /**
   * On a warm pool's member (contract 1.5): its id (a label: the backend lists members by it). Bound to a Cluster,
   * the member keeps it, and the uid, namespace and name labels above become the Cluster's.
   */
  poolMemberLabel: `${ENGINE_GROUP}/pool-member`,
  /** The ClusterPool the member was made for, and the version it was asked at. */
  poolAnnotation: `${ENGINE_GROUP}/pool`,
  poolVersionAnnotation: `${ENGINE_GROUP}/pool-version`,
} as const;

/** A Cluster's target, or a pool member's: then the CAPI Cluster is marked as one (see {@link CAPI_BACKEND_KEYS}). */
export type CapiTarget = ClusterTarget & { readonly poolMember?: PoolMemberSpec };

/** A CAPI Cluster with a topology, as far as the backend reads and writes it. */
export interface TopologyCluster {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta & { readonly name: string };
  readonly spec: {
    readonly clusterNetwork?: JsonObject;
    readonly controlPlaneEndpoint?: { readonly host?: string; readonly port?: number };
    readonly topology?: Topology;
    /** Cluster API reconciles nothing of a paused Cluster (the capi backend pauses one it stops the machines of). */
    readonly paused?: boolean;
    /** The infrastructure Cluster (e.g. a DockerCluster), which the topology controller makes from the class. */
    readonly infrastructureRef?: {
      readonly apiGroup?: string;
      readonly kind?: string;
      readonly name?: string;
    };
  };
  readonly status?: TopologyClusterStatus;
}

/** `spec.topology` of a CAPI Cluster. */
export interface Topology {
  readonly classRef: { readonly name: string; readonly namespace?: string };
  readonly version: string;
  readonly controlPlane?: { readonly replicas?: number };
  readonly workers?: {
    readonly machineDeployments?: readonly {
      readonly class: string;
      readonly name: string;
      readonly replicas?: number;
    }[];
  };
  readonly variables?: readonly CapiVariable[];
}

/** A v1beta2 condition as Cluster API writes it. */
export interface CapiCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

/** The parts of a CAPI Cluster's status the backend reads. */
export interface TopologyClusterStatus {
  readonly phase?: string;
  readonly observedGeneration?: number;
  readonly initialization?: {
    readonly infrastructureProvisioned?: boolean;
    readonly controlPlaneInitialized?: boolean;
  };
  readonly controlPlane?: {
    readonly desiredReplicas?: number;
    readonly replicas?: number;
    readonly availableReplicas?: number;
    readonly versions?: readonly { readonly version: string; readonly replicas?: number }[];
  };
  readonly workers?: {
    readonly desiredReplicas?: number;
    /** Worker Machines that exist. */
    readonly replicas?: number;
    readonly availableReplicas?: number;
  };
  readonly conditions?: readonly CapiCondition[];
}

/** A ClusterClass, as far as the backend reads it. */
export interface ClusterClass {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly generation?: number };
  readonly spec: {
    readonly kubernetesVersions?: readonly string[];
    readonly infrastructure?: { readonly templateRef?: { readonly kind?: string } };
    readonly workers?: {
      readonly machineDeployments?: readonly { readonly class: string }[];
      readonly machinePools?: readonly { readonly class: string }[];
    };
    readonly variables?: readonly {
      readonly name: string;
      readonly required?: boolean;
      readonly schema?: { readonly openAPIV3Schema?: { readonly default?: JsonValue } };
    }[];
  };
  readonly status?: { readonly observedGeneration?: number; readonly conditions?: readonly CapiCondition[] };
}

/**
 * The CAPI Cluster's name: the openMCP Cluster's name (at most 20 characters, a letter first) and eight hex digits of
 * a digest of its namespace and name: readable, unique per openMCP Cluster within one namespace of CAPI Clusters,
 * the same on every call (a restarted engine finds what it made), and short, because Cluster API and CAPD build
 * machine, container and node names from it.
 */
export function capiClusterName(target: Pick<ClusterTarget, "namespace" | "name">): string {
  const digest = createHash("sha256").update(`${target.namespace}/${target.name}`).digest("hex").slice(0, 8);
  let readable = target.name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .slice(0, 20)
    .replace(/-+$/, "");
  if (!/^[a-z]/.test(readable)) readable = `c${readable}`.slice(0, 20).replace(/-+$/, "");
  return `${readable}-${digest}`;
}

/** `1.36.3` → `v1.36.3`, as Cluster API writes versions. */
export const capiVersion = (version: string): string => (version.startsWith("v") ? version : `v${version}`);

/** `v1.36.3+build.1` → `1.36.3`: Cluster API's version as the engine reports it. */
export function engineVersion(version: string): string {
  return version.replace(/^v/, "").replace(/[+-].*$/, "");
}

/** The CAPI Cluster the engine wants for `target` at `version` (`X.Y.Z`). */
export function desiredTopologyCluster(
  target: CapiTarget,
  settings: CapiSettings,
  version: string,
): TopologyCluster {
  const workers: CapiWorkerPool[] = [...settings.workers];
  const member = target.poolMember;
  return {
    apiVersion: "cluster.x-k8s.io/v1beta2",
    kind: "Cluster",
    metadata: {
      name: capiClusterName(target),
      namespace: settings.namespace,
      labels: {
        ...settings.labels,
        ...copiedEntries(target.labels, true),
        [CAPI_BACKEND_KEYS.clusterUidLabel]: target.uid,
        [CAPI_BACKEND_KEYS.clusterNamespaceLabel]: target.namespace,
        [CAPI_BACKEND_KEYS.clusterNameLabel]: target.name,
        [CAPI_BACKEND_KEYS.providerConfigLabel]: target.providerConfig,
        ...(member ? { [CAPI_BACKEND_KEYS.poolMemberLabel]: member.id } : {}),
      },
      annotations: {
        ...settings.annotations,
        ...copiedEntries(target.annotations, false),
        ...(member
          ? {
              [CAPI_BACKEND_KEYS.poolAnnotation]: member.pool,
              [CAPI_BACKEND_KEYS.poolVersionAnnotation]: member.version,
            }
          : {}),
      },
    },
    spec: {
      ...(settings.clusterNetwork ? { clusterNetwork: settings.clusterNetwork } : {}),
      topology: {
        classRef: { name: settings.clusterClass.name, namespace: settings.clusterClass.namespace },
        version: capiVersion(version),
        controlPlane: { replicas: settings.controlPlaneReplicas },
        ...(workers.length > 0
          ? {
              workers: {
                machineDeployments: workers.map((w) => ({
                  class: w.class,
                  name: w.name,
                  replicas: w.replicas,
                })),
              },
            }
          : {}),
        ...(settings.variables.length > 0 ? { variables: settings.variables } : {}),
      },
    },
  };
}

/** Whether `cluster` was made for the openMCP Cluster `target` (by its uid). */
export const ownedBy = (cluster: TopologyCluster, target: Pick<ClusterTarget, "uid">): boolean =>
  cluster.metadata.labels?.[CAPI_BACKEND_KEYS.clusterUidLabel] === target.uid;

/** Whether each wanted entry (by name) is in `stored` with what it wants, and `stored` has no other. */
function sameByName<T extends { readonly name: string }>(
  wanted: readonly T[] | undefined,
  stored: readonly T[] | undefined,
  extraAllowed: boolean,
): boolean {
  const byName = new Map((stored ?? []).map((entry) => [entry.name, entry]));
  if (!extraAllowed && byName.size !== (wanted ?? []).length) return false;
  return (wanted ?? []).every((entry) => containedIn(entry, byName.get(entry.name)));
}

/**
 * The JSON merge patch (RFC 7386) that brings `stored` to `desired`, or `undefined` when nothing differs: the class,
 * the version, the control-plane replicas, the worker pools, the variables (a defaulting webhook may add the class's
 * defaults beside ours: those do not count as a difference), the network, and the labels and annotations the engine
 * sets (copied `metadata.open-control-plane.io/*` ones that went are removed). Lists are replaced whole. Throws when
 * the version would go down: the engine never downgrades a cluster.
 */
export function topologyChanges(stored: TopologyCluster, desired: TopologyCluster): JsonObject | undefined {
  const want = desired.spec.topology as Topology;
  const have = stored.spec.topology;
  const topology: Record<string, JsonValue> = {};
  if (!have || !containedIn(want.classRef, have.classRef))
    topology.classRef = want.classRef as unknown as JsonObject;
  if (have?.version !== want.version) {
    if (have?.version && compareVersions(engineVersion(want.version), engineVersion(have.version)) < 0)
      throw new Error(
        `CAPI Cluster ${stored.metadata.namespace}/${stored.metadata.name} runs Kubernetes ${engineVersion(have.version)}; the engine does not downgrade it to ${engineVersion(want.version)}`,
      );
    topology.version = want.version;
  }
  if (have?.controlPlane?.replicas !== want.controlPlane?.replicas)
    topology.controlPlane = { replicas: want.controlPlane?.replicas ?? null };
  // Asleep (contract 1.6): the pools stay at zero replicas until wake restores them.
  const asleep = stored.metadata.annotations?.[CAPI_HIBERNATED_REPLICAS_ANNOTATION] !== undefined;
  const workers = (want.workers?.machineDeployments ?? []).map((pool) =>
    asleep ? { ...pool, replicas: 0 } : pool,
  );
  if (!sameByName(workers, have?.workers?.machineDeployments, false))
    topology.workers = { machineDeployments: workers as unknown as JsonValue };
  if (!sameByName(want.variables, have?.variables, true))
    topology.variables = mergedVariables(want.variables ?? [], have?.variables ?? []) as unknown as JsonValue;
  const spec: Record<string, JsonValue> = {};
  if (Object.keys(topology).length > 0) spec.topology = topology;
  if (desired.spec.clusterNetwork && !containedIn(desired.spec.clusterNetwork, stored.spec.clusterNetwork))
    spec.clusterNetwork = desired.spec.clusterNetwork;
  const patch = mergePatch(stored.metadata, desired.metadata, spec);
  // A wake's marker goes with the next write (any later scale-up is an update, not a wake).
  if (!patch || stored.metadata.annotations?.[CAPI_WAKING_REPLICAS_ANNOTATION] === undefined) return patch;
  const metadata = (patch.metadata ?? {}) as JsonObject;
  return {
    ...patch,
    metadata: {
      ...metadata,
      annotations: { ...(metadata.annotations as JsonObject), [CAPI_WAKING_REPLICAS_ANNOTATION]: null },
    },
  };
}

/** Ours first, then the stored variables we do not set (a webhook's defaults stay). */
function mergedVariables(wanted: readonly CapiVariable[], stored: readonly CapiVariable[]): CapiVariable[] {
  const names = new Set(wanted.map((v) => v.name));
  return [...wanted, ...stored.filter((v) => !names.has(v.name))];
}

/** Cluster API's conditions the backend mirrors onto the openMCP Cluster, as `Capi<type>`, in the order people read them. */
export const MIRRORED_CONDITIONS = [
  "Available",
  "TopologyReconciled",
  "InfrastructureReady",
  "ControlPlaneInitialized",
  "ControlPlaneAvailable",
  "WorkersAvailable",
  "RemoteConnectionProbe",
] as const;

/** Longest condition message mirrored (Cluster API's aggregated messages can run long). */
const MESSAGE_LIMIT = 1024;

const conditionOf = (cluster: TopologyCluster, type: string) =>
  cluster.status?.conditions?.find((condition) => condition.type === type);

/** One line of a Cluster API message (they use `* ` bullets over several lines). */
function oneLine(message: string | undefined): string {
  const line = (message ?? "")
    .replace(/\s*\n\s*/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return line.length > MESSAGE_LIMIT ? `${line.slice(0, MESSAGE_LIMIT)}…` : line;
}

/** The version the control plane runs: the oldest Cluster API reports (mid-rollout the cluster still runs it). */
function runningVersion(cluster: TopologyCluster): string | undefined {
  const versions = (cluster.status?.controlPlane?.versions ?? []).map((v) => engineVersion(v.version));
  return versions.filter((v) => parseVersion(v)).sort(compareVersions)[0];
}

/**
 * What Cluster API's view of a CAPI Cluster says, as the engine's observation:
 * - `deleting` once it has a deletionTimestamp, with Cluster API's `Deleting` message, and after `deletionTimeoutMs`
 *   (counted from the deletionTimestamp) a message that says it is stuck and on what;
 * - `failed` in phase `Failed`;
 * - `ready` when `Available` is True, the control plane runs exactly the topology's version, the topology is
 *   reconciled and an endpoint is set;
 * - `updating` once initialized but not ready (a rollout to another version, or a cluster no longer available);
 * - `provisioning` before that.
 * The version is the one the control plane runs (before any: the topology's); Cluster API's conditions are mirrored
 * with their own reasons and messages.
 */
export function topologyObservation(
  cluster: TopologyCluster,
  options: { readonly now: number; readonly deletionTimeoutMs: number },
): ClusterObservation {
  const wanted = engineVersion(cluster.spec.topology?.version ?? "");
  const running = runningVersion(cluster);
  const version = running ?? wanted;
  const where = `CAPI Cluster ${cluster.metadata.namespace}/${cluster.metadata.name}`;
  const endpointHost = cluster.spec.controlPlaneEndpoint?.host;
  const endpointPort = cluster.spec.controlPlaneEndpoint?.port;
  const endpoint = endpointHost && endpointPort ? `https://${endpointHost}:${endpointPort}` : undefined;
  const controlPlane = cluster.status?.controlPlane;
  const info = `${where} (class ${cluster.spec.topology?.classRef.name ?? "?"}): ${cluster.status?.phase ?? "Pending"}, control plane ${controlPlane?.availableReplicas ?? 0}/${controlPlane?.desiredReplicas ?? cluster.spec.topology?.controlPlane?.replicas ?? "?"} available`;
  const conditions: BackendCondition[] = MIRRORED_CONDITIONS.flatMap((type) => {
    const condition = conditionOf(cluster, type);
    if (!condition) return [];
    const status = condition.status === "True" || condition.status === "False" ? condition.status : "Unknown";
    return [
      { type: `Capi${type}`, status, reason: condition.reason || type, message: oneLine(condition.message) },
    ];
  });
  const base = { exists: true as const, version, info, conditions, ...(endpoint ? { endpoint } : {}) };

  if (cluster.metadata.deletionTimestamp) {
    const since = Date.parse(cluster.metadata.deletionTimestamp);
    const deleting = oneLine(conditionOf(cluster, "Deleting")?.message) || "Cluster API is deleting it";
    const overdue = Number.isFinite(since) && options.now - since > options.deletionTimeoutMs;
    const message = overdue
      ? `${where} is still being deleted after ${Math.round((options.now - since) / 60_000)} min (more than the ${Math.round(options.deletionTimeoutMs / 60_000)} min expected): ${deleting}; Cluster API's Deleting condition and its controllers' logs say what it waits for`
      : `${where} is being deleted: ${deleting}`;
    return { ...base, phase: "deleting", message };
  }
  const topologyFalse = conditionOf(cluster, "TopologyReconciled")?.status === "False";
  const available = conditionOf(cluster, "Available")?.status === "True";
  const rolledOut =
    running !== undefined &&
    wanted !== "" &&
    (controlPlane?.versions ?? []).every((v) => engineVersion(v.version) === wanted);
  const initialized = cluster.status?.initialization?.controlPlaneInitialized === true;
  let phase: BackendPhase;
  if (cluster.status?.phase === "Failed") phase = "failed";
  else if (available && rolledOut && !topologyFalse && endpoint) phase = "ready";
  else if (initialized) phase = "updating";
  else phase = "provisioning";
  if (phase === "ready") return { ...base, phase };
  // Why it is not ready, in Cluster API's words: the first False of the conditions people read first.
  const blocking = MIRRORED_CONDITIONS.map((type) => conditionOf(cluster, type)).find(
    (condition) => condition && condition.status !== "True" && condition.message,
  );
  const message = blocking
    ? `${where}: ${blocking.type}: ${oneLine(blocking.message)}`
    : `${where}: ${cluster.status?.phase ?? "waiting for Cluster API"}`;
  return { ...base, phase, message };
}

/** Whether a ClusterClass has worker classes at all. */
export function classHasWorkers(clusterClass: ClusterClass): boolean {
  const workers = clusterClass.spec.workers;
  return (workers?.machineDeployments?.length ?? 0) + (workers?.machinePools?.length ?? 0) > 0;
}

/**
 * Traits of the clusters a class makes with these settings: `workerless` when the topology has no worker machines
 * (the class has no worker classes, or the settings ask for none), and the infrastructure as `provider-<kind>` from
 * the class's infrastructure template kind (`DockerClusterTemplate` → `provider-docker`).
 */
export function classTraits(clusterClass: ClusterClass, settings: CapiSettings): string[] {
  const traits: string[] = [];
  const workerMachines = settings.workers.reduce((sum, pool) => sum + pool.replicas, 0);
  if (!classHasWorkers(clusterClass) || workerMachines === 0) traits.push("workerless");
  const kind = clusterClass.spec.infrastructure?.templateRef?.kind;
  const provider = kind?.replace(/ClusterTemplate$/, "").toLowerCase();
  if (provider) traits.push(`provider-${provider}`);
  return traits;
}

/**
 * Why a class cannot serve these settings, or `undefined`: a worker class the settings name that the class lacks, a
 * required variable without a default that the settings do not set, a variable the class does not define.
 */
export function classProblem(clusterClass: ClusterClass, settings: CapiSettings): string | undefined {
  const where = `ClusterClass ${clusterClass.metadata.namespace}/${clusterClass.metadata.name}`;
  const workerClasses = new Set((clusterClass.spec.workers?.machineDeployments ?? []).map((w) => w.class));
  const unknownWorker = settings.workers.find((pool) => !workerClasses.has(pool.class));
  if (unknownWorker)
    return `${where} has no worker class ${unknownWorker.class} (settings.workers of pool ${unknownWorker.name}; it has: ${[...workerClasses].join(", ") || "none"})`;
  const defined = new Map((clusterClass.spec.variables ?? []).map((v) => [v.name, v]));
  const unknown = settings.variables.find((v) => !defined.has(v.name));
  if (unknown)
    return `${where} defines no variable ${unknown.name} (settings.variables; it defines: ${[...defined.keys()].join(", ") || "none"})`;
  const given = new Set(settings.variables.map((v) => v.name));
  const missing = [...defined.values()].find(
    (v) => v.required && !given.has(v.name) && v.schema?.openAPIV3Schema?.default === undefined,
  );
  if (missing) return `${where} requires variable ${missing.name}; set it in settings.variables`;
  return undefined;
}

/**
 * The versions a config offers: those it lists, kept only where the class lists them too (`spec.kubernetesVersions`,
 * when it has that list); a config listing none offers the class's list. Newest first.
 */
export function offeredVersions(
  listed: readonly SupportedVersion[],
  clusterClass: ClusterClass,
): SupportedVersion[] {
  const classVersions = clusterClass.spec.kubernetesVersions?.map(engineVersion);
  const offered =
    listed.length > 0
      ? listed.filter((v) => !classVersions || classVersions.includes(v.version))
      : (classVersions ?? [])
          .filter((v) => parseVersion(v)?.parts.length === 3)
          .map((version) => ({ version }));
  return [...offered].sort((a, b) => compareVersions(b.version, a.version));
}
