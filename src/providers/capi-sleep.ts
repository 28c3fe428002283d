/**
 * A CAPI Cluster asleep (contract 1.6), in Cluster API's terms: every worker pool at zero replicas (the replicas before
 * recorded on it), then — on Docker machines (CAPD), the one infrastructure whose machines can stop and start again on
 * their disks — the Cluster paused and its control-plane and load-balancer containers stopped, their addresses recorded
 * so they start again where kubeadm's certificates and the load balancer expect them. The patches, and what the
 * backend observes, as pure functions of the CAPI Cluster and its machines as Docker shows them.
 */

import type { ClusterObservation } from "../api/backend.ts";
import type { JsonObject, JsonValue } from "../api/common.ts";
import {
  CAPI_HIBERNATED_REPLICAS_ANNOTATION,
  CAPI_SLEEPING_MACHINES_ANNOTATION,
  CAPI_WAKING_REPLICAS_ANNOTATION,
} from "../api/constants/hibernation.ts";
import type { TopologyCluster } from "./capi-topology.ts";

/** A machine container's addresses on one Docker network. */
export interface MachineAddress {
  readonly ipv4?: string;
  readonly ipv6?: string;
}

/** Addresses of machine containers by container name, then by Docker network. */
export type MachineAddresses = Readonly<Record<string, Readonly<Record<string, MachineAddress>>>>;

/** A machine container of a CAPI Cluster on Docker (CAPD labels it with the Cluster's name), as Docker shows it. */
export interface DockerMachine {
  readonly name: string;
  /** CAPD's role label: `control-plane`, `worker` or `external-load-balancer`. */
  readonly role: string;
  readonly running: boolean;
  /** Its addresses by network; none for a stopped container (Docker releases them). */
  readonly addresses: Readonly<Record<string, MachineAddress>>;
}

/** Whether the backend can stop a sleeping CAPI Cluster's machines, and if so which they are. */
export type MachineStop =
  | { readonly can: true; readonly machines: readonly DockerMachine[] }
  | { readonly can: false; readonly why: string };

/** The infrastructure kind of Cluster API's Docker provider (CAPD), whose machines are containers. */
export const DOCKER_INFRASTRUCTURE_KIND = "DockerCluster";

/** Whether the CAPI Cluster's machines are Docker containers (CAPD). */
export const onDockerMachines = (cluster: TopologyCluster): boolean =>
  cluster.spec.infrastructureRef?.kind === DOCKER_INFRASTRUCTURE_KIND;

const caughtUpWith = (cluster: TopologyCluster) =>
  (cluster.status?.observedGeneration ?? 0) >= (cluster.metadata.generation ?? 0);

/**
 * Cluster API is still taking the workers down: its status lags the spec, or a pool or worker Machine is left. Never
 * once the backend paused the Cluster (it pauses only after the workers are gone; a paused Cluster's status lags).
 */
export function workersScaling(cluster: TopologyCluster): boolean {
  if (sleepingMachines(cluster)) return false;
  const pools = cluster.spec.topology?.workers?.machineDeployments ?? [];
  return (
    !caughtUpWith(cluster) ||
    (cluster.status?.workers?.replicas ?? 0) > 0 ||
    pools.some((pool) => (pool.replicas ?? 0) > 0)
  );
}

/**
 * What the backend recorded in annotation `annotation` of a CAPI Cluster: a JSON object (undefined where the annotation
 * is absent); anything else fails, saying it should be a JSON object of `what`.
 */
function recordedObject<T>(cluster: TopologyCluster, annotation: string, what: string): T | undefined {
  const value = cluster.metadata.annotations?.[annotation];
  if (value === undefined) return undefined;
  try {
    const parsed = JSON.parse(value) as unknown;
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as T;
  } catch {}
  throw new Error(
    `CAPI Cluster ${cluster.metadata.namespace}/${cluster.metadata.name}: annotation ${annotation} is not a JSON object of ${what}: ${value}`,
  );
}

/** The machine addresses recorded when the backend stopped the machines; undefined when it did not. */
export function sleepingMachines(cluster: TopologyCluster): MachineAddresses | undefined {
  return recordedObject(cluster, CAPI_SLEEPING_MACHINES_ANNOTATION, "machine addresses");
}

/**
 * The merge patch that pauses a CAPI Cluster before its machines stop, recording the addresses of those that run
 * (kept for those stopped already: a stopped container has none to read), or undefined when it is paused and every
 * running machine's addresses are recorded.
 */
export function pausePatch(
  cluster: TopologyCluster,
  machines: readonly DockerMachine[],
): JsonObject | undefined {
  const recorded = sleepingMachines(cluster) ?? {};
  const running = machines.filter((machine) => machine.running);
  const unrecorded = running.filter(
    (machine) => JSON.stringify(recorded[machine.name]) !== JSON.stringify(machine.addresses),
  );
  if (cluster.spec.paused === true && sleepingMachines(cluster) && unrecorded.length === 0) return undefined;
  const addresses = {
    ...recorded,
    ...Object.fromEntries(running.map((machine) => [machine.name, machine.addresses])),
  };
  return {
    metadata: { annotations: { [CAPI_SLEEPING_MACHINES_ANNOTATION]: JSON.stringify(addresses) } },
    spec: { paused: true },
  };
}

/**
 * The observation of a CAPI Cluster whose workers are gone ({@link hibernationObservation} says `hibernated`), with
 * its machines as Docker shows them: machines still running (or the Cluster not yet paused) are a sleep half done,
 * `hibernating` and `outOfDate` — the engine orders `hibernate` again, which stops them; all stopped, `hibernated`,
 * naming what was stopped. A Cluster whose machines the backend cannot stop keeps its control plane running, and says why.
 */
export function machinesAsleepObservation(
  cluster: TopologyCluster,
  observation: ClusterObservation,
  stop: MachineStop,
): ClusterObservation {
  if (!observation.exists || observation.phase !== "hibernated") return observation;
  const where = `CAPI Cluster ${cluster.metadata.namespace}/${cluster.metadata.name}`;
  if (!stop.can) {
    return sleepingMachines(cluster)
      ? {
          ...observation,
          message: `${where}: asleep, its workers at zero and its machines stopped; they cannot be looked at now: ${stop.why}`,
        }
      : { ...observation, message: `${observation.message}; not stopped: ${stop.why}` };
  }
  const running = stop.machines.filter((machine) => machine.running).map((machine) => machine.name);
  if (running.length > 0 || cluster.spec.paused !== true || !sleepingMachines(cluster))
    return {
      ...observation,
      phase: "hibernating",
      outOfDate: true,
      message: `${where}: workers at zero; stopping its machines (${running.length > 0 ? `still running: ${running.join(", ")}` : "pausing Cluster API first"})`,
    };
  return {
    ...observation,
    message: `${where}: asleep: every worker pool at zero, Cluster API paused, its machine containers stopped (${stop.machines.map((machine) => machine.name).join(", ")}); they start at the same addresses on wake`,
  };
}

/** Replicas of worker pools by name, as the hibernation annotations record them (`null`: the pool set none). */
type PoolReplicas = Readonly<Record<string, number | null>>;

function recordedReplicas(cluster: TopologyCluster, annotation: string): PoolReplicas | undefined {
  return recordedObject(cluster, annotation, "replicas by worker pool");
}

/**
 * The merge patch that puts a CAPI Cluster to sleep (contract 1.6), or undefined when it sleeps already: every worker
 * pool (`spec.topology.workers.machineDeployments`) at zero replicas, the replicas before recorded in
 * {@link CAPI_HIBERNATED_REPLICAS_ANNOTATION}, in one patch. Cluster API's control planes (a KubeadmControlPlane, whose
 * machines hold etcd) cannot scale to zero and keep their data: on Docker machines the backend then pauses the Cluster
 * and stops its machine containers ({@link pausePatch}); elsewhere the control plane keeps running.
 */
export function hibernationPatch(cluster: TopologyCluster): JsonObject | undefined {
  if (cluster.metadata.annotations?.[CAPI_HIBERNATED_REPLICAS_ANNOTATION] !== undefined) return undefined;
  const pools = cluster.spec.topology?.workers?.machineDeployments ?? [];
  const replicas = Object.fromEntries(pools.map((pool) => [pool.name, pool.replicas ?? null]));
  const asleep = pools.map((pool) => ({ ...pool, replicas: 0 })) as unknown as JsonValue;
  return {
    metadata: {
      annotations: {
        [CAPI_HIBERNATED_REPLICAS_ANNOTATION]: JSON.stringify(replicas),
        [CAPI_WAKING_REPLICAS_ANNOTATION]: null,
      },
    },
    ...(pools.length === 0 ? {} : { spec: { topology: { workers: { machineDeployments: asleep } } } }),
  };
}

/**
 * The merge patch that wakes a CAPI Cluster (contract 1.6), or undefined when it is awake: each recorded pool back at
 * the replicas recorded before the sleep (a pool that set none sets none again), the record moved to
 * {@link CAPI_WAKING_REPLICAS_ANNOTATION}; a Cluster the backend paused to stop its machines is unpaused (its
 * machines started first, see `DockerMachines.start`) and the record of their addresses removed.
 */
export function wakePatch(cluster: TopologyCluster): JsonObject | undefined {
  const recorded = recordedReplicas(cluster, CAPI_HIBERNATED_REPLICAS_ANNOTATION);
  if (!recorded) return undefined;
  const pools = (cluster.spec.topology?.workers?.machineDeployments ?? []).map((pool) => {
    if (!(pool.name in recorded)) return pool;
    const { replicas: _, ...rest } = pool;
    const before = recorded[pool.name];
    return before === null || before === undefined ? rest : { ...rest, replicas: before };
  });
  const paused = sleepingMachines(cluster) !== undefined;
  return {
    metadata: {
      annotations: {
        [CAPI_HIBERNATED_REPLICAS_ANNOTATION]: null,
        [CAPI_WAKING_REPLICAS_ANNOTATION]: JSON.stringify(recorded),
        ...(paused ? { [CAPI_SLEEPING_MACHINES_ANNOTATION]: null } : {}),
      },
    },
    ...(paused || pools.length > 0
      ? {
          spec: {
            ...(paused ? { paused: null } : {}),
            ...(pools.length === 0
              ? {}
              : { topology: { workers: { machineDeployments: pools as unknown as JsonValue } } }),
          },
        }
      : {}),
  };
}

/** What stays running while a CAPI Cluster sleeps whose machines the backend cannot stop, for its `hibernated` message. */
export const CAPI_CONTROL_PLANE_KEEPS_RUNNING =
  "the control plane keeps running (Cluster API's control planes, e.g. a KubeadmControlPlane whose machines hold etcd, cannot scale to zero and keep their data), so its endpoint still answers";

/**
 * Hibernation's view of a CAPI Cluster (contract 1.6) over {@link topologyObservation}'s: asleep as asked (the
 * hibernation annotation) it is `hibernating` while worker Machines still exist or a pool is not yet at zero, then
 * `hibernated` (with a message that the control plane keeps running, which {@link machinesAsleepObservation} refines
 * for a Cluster on Docker machines); woken, `waking` until Cluster API has caught up
 * and the restored workers are available, then what Cluster API says (`ready`). Deleting and failed stay as they are.
 */
export function hibernationObservation(
  cluster: TopologyCluster,
  observation: ClusterObservation,
): ClusterObservation {
  if (!observation.exists || observation.phase === "deleting" || observation.phase === "failed")
    return observation;
  const where = `CAPI Cluster ${cluster.metadata.namespace}/${cluster.metadata.name}`;
  const machines = cluster.status?.workers?.replicas ?? 0;
  const caughtUp = caughtUpWith(cluster);
  if (cluster.metadata.annotations?.[CAPI_HIBERNATED_REPLICAS_ANNOTATION] !== undefined) {
    const scaling = workersScaling(cluster);
    return {
      ...observation,
      phase: scaling ? "hibernating" : "hibernated",
      message: scaling
        ? `${where}: scaling its workers to zero (${machines} worker Machines left)`
        : `${where}: asleep, every worker pool at zero replicas and no worker Machine left; ${CAPI_CONTROL_PLANE_KEEPS_RUNNING}`,
    };
  }
  const restored = recordedReplicas(cluster, CAPI_WAKING_REPLICAS_ANNOTATION);
  if (!restored) return observation;
  const wanted = Object.values(restored).reduce<number>((sum, n) => sum + (n ?? 0), 0);
  const available = cluster.status?.workers?.availableReplicas ?? 0;
  if (caughtUp && available >= wanted && observation.phase === "ready") return observation;
  return {
    ...observation,
    phase: "waking",
    message: `${where}: restoring its workers (${available}/${wanted} available)${observation.message ? `; ${observation.message}` : ""}`,
  };
}
