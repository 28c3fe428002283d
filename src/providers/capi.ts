/**
 * The `capi` backend: each Cluster is a Cluster API topology Cluster (cluster.x-k8s.io/v1beta2) of a ClusterClass,
 * on a Cluster API management cluster — any infrastructure Cluster API reaches.
 */

import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type {
  AdminAccess,
  BackendContext,
  BackendFactory,
  ClusterBackend,
  ConfigOffer,
  PoolSupport,
  SecretReader,
} from "../api/backend-contract.ts";
import { BACKEND_CONTRACT_VERSION } from "../api/backend-contract.ts";
import { type Clock, systemClock } from "../api/clock.ts";
import { CAPI_CLUSTER_RESOURCE, CAPI_KUBECONFIG_SECRET, kubeconfigSecretName } from "../api/cluster-api.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { JsonObject } from "../api/common.ts";
import { CAPI_SLEEPING_MACHINES_ANNOTATION } from "../api/constants/hibernation.ts";
import type { SnapshotManifest, SnapshotReference } from "../api/control-plane-snapshot.ts";
import { isNotFound } from "../api/error-message.ts";
import { silentLogger } from "../api/logger.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { builtEtcdutl } from "../controlplane/etcd-snapshot.ts";
import { onPath } from "../util/executables.ts";
import { CapiClones } from "./capi-clones.ts";
import { DockerMachines } from "./capi-docker-machines.ts";
import { CapiPlaces, capiPoolKind } from "./capi-pools.ts";
import {
  CAPI_CLUSTERS,
  type CapiPlace,
  type CapiRecord,
  type Management,
  placeOf,
  recordOf,
} from "./capi-records.ts";
import { type CapiSettings, capiSettings } from "./capi-settings.ts";
import {
  hibernationObservation,
  hibernationPatch,
  type MachineStop,
  machinesAsleepObservation,
  onDockerMachines,
  pausePatch,
  sleepingMachines,
  wakePatch,
  workersScaling,
} from "./capi-sleep.ts";
import {
  CAPI_BACKEND_KEYS,
  type CapiTarget,
  type ClusterClass,
  capiClusterName,
  classProblem,
  classTraits,
  desiredTopologyCluster,
  engineVersion,
  offeredVersions,
  ownedBy,
  type TopologyCluster,
  topologyChanges,
  topologyObservation,
} from "./capi-topology.ts";
import { type DockerRun, dockerRunner } from "./shared/docker-cli.ts";
import { remoteCallError } from "./shared/error-wording.ts";
import {
  NODE_ETCD_SNAPSHOT_FILE,
  nodeSnapshotFiles,
  requireNodeKeys,
  rollBackNode,
} from "./shared/kubeadm-node-snapshots.ts";
import { type KubeconfigSecretRef, readKubeconfigSecret } from "./shared/kubeconfig-secret.ts";
import { RecordFile } from "./shared/record-file.ts";
import type { RemoteBackendOptions } from "./shared/remote-backend-options.ts";
import {
  againWhileChanged,
  apiClients,
  type RemoteObjectKind,
  RemoteObjects,
} from "./shared/remote-object.ts";
import { RemoteObjectPools } from "./shared/remote-object-pools.ts";
import { describeSnapshot, readOwnSnapshot, writeSnapshot } from "./shared/snapshot-store.ts";

const CLUSTER_CLASSES = {
  group: CAPI_CLUSTER_RESOURCE.group,
  version: CAPI_CLUSTER_RESOURCE.version,
  plural: "clusterclasses",
} as const;

/** Knobs of the capi backend. */
export interface CapiBackendOptions extends RemoteBackendOptions {
  /** The management cluster of ProviderConfigs that name none (`--backend-option kubeconfig=`, else the default). */
  readonly defaultManagement?: KubeConfig;
  /** JSON file recording where ProviderConfigs put CAPI Clusters, and which pools have members there. */
  readonly placesFile: string;
  /**
   * The Docker CLI of the engine where Cluster API's Docker machines (CAPD) run: a sleeping Cluster on them has its
   * machines stopped too. Absent: their control planes keep running while asleep.
   */
  readonly docker?: string;
  /** etcdutl, which a snapshot's restore copies into the control-plane machine; default: built on the first restore. */
  readonly etcdutl?: string;
}

/**
 * A {@link ClusterBackend} that makes each Cluster a Cluster API topology Cluster. A ProviderConfig names a
 * ClusterClass, the namespace for the CAPI Clusters, the control-plane replicas, worker pools and topology
 * variables; its profile offers the versions it lists (kept to the class's `spec.kubernetesVersions`, when the class
 * has that list).
 *
 * Flow: `create` records where the CAPI Cluster goes, then creates it (or, when it exists already and is this
 * Cluster's, brings it in line at the version it has); `observe` reads Cluster API's own view (phase, conditions,
 * `status.initialization`, the control plane's versions, the endpoint) and mirrors its conditions as `Capi<type>`;
 * `update` patches only what differs (a merge patch guarded by the resourceVersion read; never a downgrade);
 * `delete` deletes the CAPI Cluster and reports it `deleting` (with Cluster API's own `Deleting` message, flagged
 * as overdue after `deletionTimeoutSeconds`) until Cluster API has removed it; `adminAccess` hands out the
 * `<cluster>-kubeconfig` Secret Cluster API writes. Warm pools (`pools`, contract 1.5; `capi-pools.ts`): a member is
 * a CAPI Cluster marked with its pool, and binding relabels it as the Cluster's own; every call for a Cluster first
 * lets its uid lead to that CAPI Cluster (`resolve`), and `create` of a bound Cluster makes nothing.
 *
 * Guarantees: one CAPI Cluster per Cluster (a deterministic name, or the pool member it was bound to, labelled with
 * the Cluster's uid: a CAPI Cluster of another Cluster is never adopted, also after a restart or without the state
 * file); Cluster API's refusals are passed on with its message; no kubeconfig, key or token in an observation, a log
 * or an error.
 */
export class CapiBackend implements ClusterBackend {
  readonly name = "capi";
  readonly capabilities = { adminAccess: true, oidc: false } as const;
  readonly #readSecret: SecretReader;
  readonly #defaultManagement?: KubeConfig;
  readonly #clock: Clock;
  readonly #clusters: RemoteObjects<TopologyCluster, CapiRecord, CapiSettings, Management>;
  readonly #places: CapiPlaces;
  readonly #pools: RemoteObjectPools<TopologyCluster, CapiRecord, CapiPlace, Management>;
  /** Warm pools (contract 1.5): members are CAPI Clusters marked with their pool; a binding relabels one. */
  readonly pools: PoolSupport;
  /** The last offer read per ProviderConfig, for callers of the synchronous `supportedVersions` and `traits`. */
  readonly #offers = new Map<string, ConfigOffer>();
  /** Docker machines (CAPD), stopped while their Cluster sleeps; absent without a Docker CLI. */
  readonly #machines?: DockerMachines;
  /** The Docker CLI, and a runner patient enough for a restore in a control-plane machine. */
  readonly #nodeDocker?: { readonly cli: string; readonly run: DockerRun };
  #etcdutl: string | undefined;
  /** Where a snapshot bound for (or read from) an object store is staged. */
  readonly #staging: string;
  /** Clusters made from a snapshot, with a Docker CLI (see capi-clones.ts). */
  readonly #clones?: CapiClones;
  /**
   * Contract 1.7, with a Docker CLI, for CAPI Clusters on Docker machines (CAPD): the kubeadm control plane's etcd and
   * keys, out of its control-plane machine as out of a kind node (shared/kubeadm-node-snapshots.ts).
   */
  readonly snapshot?: (target: ClusterTarget, reference: SnapshotReference) => Promise<SnapshotManifest>;
  readonly restore?: (target: ClusterTarget, reference: SnapshotReference) => Promise<void>;

  constructor(options: CapiBackendOptions) {
    this.#readSecret = options.readSecret;
    if (options.defaultManagement) this.#defaultManagement = options.defaultManagement;
    this.#clock = options.clock ?? systemClock;
    if (options.docker) {
      this.#machines = new DockerMachines(dockerRunner(options.docker));
      this.#nodeDocker = { cli: options.docker, run: dockerRunner(options.docker, 600_000) };
      this.snapshot = (target, reference) => this.#snapshot(target, reference);
      this.restore = (target, reference) => this.#restore(target, reference);
    }
    this.#etcdutl = options.etcdutl;
    this.#staging = join(dirname(resolve(options.stateFile)), "snapshot-staging");
    if (options.docker)
      this.#clones = new CapiClones(join(dirname(resolve(options.stateFile)), "clones"), this.#staging);
    const log = options.log ?? silentLogger;
    const records = new RecordFile<CapiRecord>(options.stateFile, "clusters");
    this.#clusters = new RemoteObjects(this.#clusterKind(), records, log);
    this.#places = new CapiPlaces(options.placesFile);
    const kind = capiPoolKind({
      clusters: this.#clusters,
      management: (ref, providerConfig) => this.#management(ref, providerConfig),
      places: this.#places,
      clock: this.#clock,
    });
    this.#pools = new RemoteObjectPools(kind, records, log);
    this.pools = this.#pools;
  }

  /** The versions last read (see {@link readOffer}); before the first read, the ones the config lists. */
  supportedVersions(config: ProviderConfig): readonly SupportedVersion[] {
    return this.#offers.get(config.metadata.name ?? "")?.versions ?? config.spec.supportedVersions ?? [];
  }

  traits(config: ProviderConfig): readonly string[] {
    return this.#offers.get(config.metadata.name ?? "")?.traits ?? config.spec.traits ?? [];
  }

  /**
   * Reads the config's ClusterClass and the namespace for its Clusters on the management cluster: the versions the
   * config lists that the class can build (all it lists when the class has no `kubernetesVersions`), and the
   * class's traits. Throws with what is wrong: settings, management cluster, namespace, class, variables, workers.
   */
  async readOffer(config: ProviderConfig): Promise<ConfigOffer> {
    const name = config.metadata.name ?? "";
    const settings = capiSettings(config.spec.settings, name);
    this.#places.learn(placeOf(settings, name)); // where its pools' members are, for listing them
    const management = await this.#management(settings.management, name);
    const { namespace: classNamespace, name: className } = settings.clusterClass;
    let clusterClass: ClusterClass;
    try {
      clusterClass = (await management.custom.getNamespacedCustomObject({
        ...CLUSTER_CLASSES,
        namespace: classNamespace,
        name: className,
      })) as ClusterClass;
    } catch (error) {
      if (isNotFound(error))
        throw new Error(
          `ClusterClass ${classNamespace}/${className} does not exist on the management cluster at ${management.server} (settings.clusterClass of ProviderConfig ${name}), or Cluster API is not installed there`,
        );
      throw management.error(`reading ClusterClass ${classNamespace}/${className}`, error);
    }
    try {
      await management.core.readNamespace({ name: settings.namespace });
    } catch (error) {
      if (isNotFound(error))
        throw new Error(
          `namespace ${settings.namespace} for the CAPI Clusters does not exist on the management cluster at ${management.server} (settings.namespace of ProviderConfig ${name})`,
        );
      throw management.error(`reading namespace ${settings.namespace}`, error);
    }
    const problem = classProblem(clusterClass, settings);
    if (problem) throw new Error(`ProviderConfig ${name}: ${problem}`);
    const refused = clusterClass.status?.conditions?.find(
      (c) => c.status === "False" && ["VariablesReady", "RefVersionsUpToDate"].includes(c.type),
    );
    if (refused)
      throw new Error(
        `ClusterClass ${classNamespace}/${className} is not usable: ${refused.type}: ${refused.message ?? refused.reason ?? ""}`,
      );
    const listed = config.spec.supportedVersions ?? [];
    const versions = offeredVersions(listed, clusterClass);
    if (versions.length === 0)
      throw new Error(
        listed.length === 0
          ? `ProviderConfig ${name} lists no spec.supportedVersions and ClusterClass ${classNamespace}/${className} has no spec.kubernetesVersions; list the versions its templates can build`
          : `ClusterClass ${classNamespace}/${className} can build none of the versions ProviderConfig ${name} lists (${listed.map((v) => v.version).join(", ")}); it lists ${(clusterClass.spec.kubernetesVersions ?? []).join(", ")}`,
      );
    const offer: ConfigOffer = {
      versions,
      traits: [...new Set([...classTraits(clusterClass, settings), ...(config.spec.traits ?? [])])].sort(),
    };
    this.#offers.set(name, offer);
    return offer;
  }

  async observe(target: ClusterTarget): Promise<ClusterObservation> {
    await this.#pools.resolve(target);
    const observation = await this.#clusters.observe(target);
    if (observation.exists && observation.phase === "ready" && this.#clones?.pending(target.uid))
      return {
        ...observation,
        phase: "provisioning",
        incomplete: "the snapshot's data is not restored into it yet",
      };
    // Workers gone: whether its machines are stopped too is Docker's to say (a second read, only while asleep).
    if (!observation.exists || observation.phase !== "hibernated") return observation;
    const found = await this.#clusters.stored(target);
    if (!found) return observation;
    return machinesAsleepObservation(found.object, observation, await this.#machineStop(found.object));
  }

  /**
   * Makes the CAPI Cluster; for a Cluster bound to a pool member, nothing (the member is its cluster). A clone
   * (`restoreFrom`, contract 1.7) is made in two creates (see capi-clones.ts): its snapshot's keys before the CAPI
   * Cluster, the snapshot's data once Cluster API has it ready.
   */
  async create(target: ClusterTarget, version: string): Promise<void> {
    if (await this.#pools.servedByMember(target)) return;
    if (target.restoreFrom) {
      const clones = this.#clones;
      if (!clones)
        throw new Error(
          "capi backend: a Cluster made from a snapshot needs the Docker CLI (--backend-option docker=<cli>)",
        );
      const found = await this.#clusters.stored(target);
      if (!found) {
        const settings = capiSettings(target.settings, target.providerConfig);
        const management = await this.#management(settings.management, target.providerConfig);
        await clones.prepare(
          target.uid,
          target.restoreFrom,
          management,
          settings.namespace,
          capiClusterName(target),
        );
      } else if (clones.pending(target.uid)) {
        const observed = await this.#clusters.observe(target);
        if (!observed.exists || observed.phase !== "ready") return; // Cluster API is still making it
        const node = await this.#controlPlaneMachine(found.object);
        const stop = await this.#machineStop(found.object);
        const others = stop.can ? stop.machines.filter((machine) => machine.name !== node) : [];
        this.#etcdutl ??= builtEtcdutl();
        return clones.finish(target.uid, this.#docker().run, this.#etcdutl, node, others);
      }
    }
    return this.#clusters.create(target, version);
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    await this.#pools.resolve(target);
    return this.#clusters.update(target, version);
  }

  /** Deletes the CAPI Cluster; done once Cluster API has removed it (observe then says it is gone). */
  async delete(target: ClusterTarget): Promise<void> {
    await this.#pools.resolve(target);
    // Cluster API deletes nothing of a paused Cluster: one the backend paused asleep is unpaused first.
    const found = await this.#clusters.stored(target);
    if (found && sleepingMachines(found.object) && !found.object.metadata.deletionTimestamp)
      await this.#clusters.patch(found.api, found.object, {
        metadata: { annotations: { [CAPI_SLEEPING_MACHINES_ANNOTATION]: null } },
        spec: { paused: null },
      });
    this.#clones?.forget(target.uid);
    return this.#clusters.delete(target);
  }

  /**
   * Its record of the CAPI Cluster (contract 1.5), for the engine the Cluster moves to; the CAPI Cluster itself stays.
   * A bound pool member's record names it, and its labels would lead there anyway.
   */
  async exportCluster(target: ClusterTarget): Promise<Readonly<Record<string, string>>> {
    await this.#pools.resolve(target);
    return this.#clusters.exportRecord(target);
  }

  /** Takes over the record another instance kept (contract 1.5); a record this instance holds stays. */
  async importCluster(target: ClusterTarget, state: Readonly<Record<string, string>>): Promise<void> {
    this.#clusters.importRecord(target, state);
  }

  /** The kubeconfig Cluster API wrote into `<cluster>-kubeconfig` (key `value`), once the cluster is ready. */
  async adminAccess(target: ClusterTarget, observed?: ClusterObservation): Promise<AdminAccess | undefined> {
    await this.#pools.resolve(target);
    const ready = await this.#clusters.ready(target, observed);
    if (!ready) return undefined;
    const { record, api: management } = ready;
    const secret = kubeconfigSecretName(record.name);
    try {
      const stored = await management.core.readNamespacedSecret({
        namespace: record.namespace,
        name: secret,
      });
      const value = stored.data?.[CAPI_KUBECONFIG_SECRET.key];
      if (!value)
        throw new Error(`Secret ${record.namespace}/${secret} has no key ${CAPI_KUBECONFIG_SECRET.key}`);
      return { kubeconfig: Buffer.from(value, "base64").toString("utf8") };
    } catch (error) {
      if (isNotFound(error)) return undefined; // Cluster API writes it shortly
      throw management.error(`reading Secret ${record.namespace}/${secret}`, error);
    }
  }

  /**
   * Puts the CAPI Cluster to sleep (contract 1.6) as far as its infrastructure allows, a step per call (each idempotent;
   * `observe` says which is next): first one merge patch (guarded by the resourceVersion read) sets every worker pool's
   * replicas to zero and records the replicas before in annotation `engine.openmcp.cloud/hibernated-replicas` (so a
   * restarted engine, or another after a move, wakes it exactly), and Cluster API deletes the worker Machines. Once
   * they are gone, on Docker machines (CAPD) and with the engine's Docker CLI: the Cluster paused with its machines'
   * addresses recorded, then its control-plane and load-balancer containers stopped (`observe` says `hibernating`
   * with `outOfDate` until then, so the engine orders this step). Elsewhere the control plane keeps running — no
   * Cluster API control plane scales to zero keeping its data (a KubeadmControlPlane's machines hold etcd) — and
   * `observe` says so. Throws while the cluster is not ready at the first step (being made or deleted, or failed).
   */
  async hibernate(target: ClusterTarget): Promise<void> {
    // Cluster API writes the status all the time: a patch refused for it is made again on a fresh read.
    await againWhileChanged(() => this.#hibernate(target));
  }

  async #hibernate(target: ClusterTarget): Promise<void> {
    const { api, object: cluster } = await this.#existingCluster(target);
    const patch = hibernationPatch(cluster);
    if (!patch) return this.#stopMachines(api, cluster);
    const now = topologyObservation(cluster, { now: this.#clock.now(), deletionTimeoutMs: 0 });
    if (!now.exists || now.phase !== "ready")
      throw new Error(
        `capi backend: CAPI Cluster ${cluster.metadata.namespace}/${cluster.metadata.name} cannot be hibernated while it is ${now.exists ? now.phase : "missing"}${now.exists && now.message ? ` (${now.message})` : ""}`,
      );
    await this.#clusters.patch(api, cluster, patch);
  }

  /** The second step of a sleep: once the workers are gone, the Cluster paused and its Docker machines stopped. */
  async #stopMachines(api: Management, cluster: TopologyCluster): Promise<void> {
    if (cluster.metadata.deletionTimestamp || workersScaling(cluster)) return;
    const stop = await this.#machineStop(cluster);
    if (!stop.can || !this.#machines) return;
    const pause = pausePatch(cluster, stop.machines);
    if (pause) await this.#clusters.patch(api, cluster, pause);
    await this.#machines.stop(stop.machines.filter((machine) => machine.running));
  }

  /**
   * Wakes the CAPI Cluster (contract 1.6): machines the backend stopped are started at the addresses they had, then
   * one guarded merge patch unpauses the Cluster and puts each worker pool back at the replicas recorded by
   * {@link hibernate}, removing the records; `observe` says `waking` until Cluster API has the workers available
   * again, then `ready` at the same endpoint. Idempotent; nothing while it is deleted.
   */
  async wake(target: ClusterTarget): Promise<void> {
    await againWhileChanged(() => this.#wake(target));
  }

  async #wake(target: ClusterTarget): Promise<void> {
    const { api, object: cluster } = await this.#existingCluster(target);
    if (cluster.metadata.deletionTimestamp) return;
    const stopped = sleepingMachines(cluster);
    if (stopped) {
      if (!this.#machines)
        throw new Error(
          `capi backend: CAPI Cluster ${cluster.metadata.namespace}/${cluster.metadata.name} sleeps with its Docker machines stopped (${Object.keys(stopped).join(", ")}), and this engine has no Docker CLI to start them (--backend-option docker=<cli>)`,
        );
      await this.#machines.start(stopped);
    }
    const patch = wakePatch(cluster);
    if (patch) await this.#clusters.patch(api, cluster, patch);
  }

  /**
   * Takes a snapshot of a ready CAPI Cluster on Docker machines (contract 1.7): etcd's and kubeadm's keys out of its
   * (first running) control-plane machine. The cluster keeps serving. Idempotent by the snapshot's name.
   */
  async #snapshot(target: ClusterTarget, reference: SnapshotReference): Promise<SnapshotManifest> {
    const observed = await this.observe(target);
    if (!observed.exists || observed.phase !== "ready")
      throw new Error(
        `capi backend: cluster ${target.namespace}/${target.name} is ${observed.exists ? observed.phase : "missing"}: a snapshot needs it ready and awake`,
      );
    const { object: cluster } = await this.#existingCluster(target);
    const node = await this.#controlPlaneMachine(cluster);
    const description = describeSnapshot(this.name, target, {
      endpoint: observed.endpoint,
      kubernetesVersion: observed.version,
      takenAtMs: this.#clock.now(),
    });
    return writeSnapshot(reference, description, nodeSnapshotFiles(this.#docker(), node), this.#staging);
  }

  /**
   * Rolls a CAPI Cluster on Docker machines back to a snapshot in place (contract 1.7), in its control-plane machine
   * as kubeadm's own restore does; refused ({@link SnapshotRejectedError}, nothing changed) for a snapshot unfinished,
   * altered, of another backend or of another cluster. One control-plane machine only: a restore of one etcd member
   * of several would be undone by the others.
   */
  async #restore(target: ClusterTarget, reference: SnapshotReference): Promise<void> {
    const { object: cluster } = await this.#existingCluster(target);
    const node = await this.#controlPlaneMachine(cluster);
    const docker = this.#docker();
    const stored = await readOwnSnapshot(reference, this.name, this.#staging);
    try {
      await requireNodeKeys(docker.run, node, stored);
      this.#etcdutl ??= builtEtcdutl();
      await rollBackNode(docker.run, node, stored.path(NODE_ETCD_SNAPSHOT_FILE), this.#etcdutl);
    } finally {
      await stored.release();
    }
  }

  /** The control-plane machine container of a CAPI Cluster on Docker machines; throws saying why there is none. */
  async #controlPlaneMachine(cluster: TopologyCluster): Promise<string> {
    const where = `CAPI Cluster ${cluster.metadata.namespace}/${cluster.metadata.name}`;
    const stop = await this.#machineStop(cluster);
    if (!stop.can) throw new Error(`capi backend: ${where} cannot be snapshotted: ${stop.why}`);
    const planes = stop.machines.filter((machine) => machine.role === "control-plane" && machine.running);
    if (planes.length !== 1)
      throw new Error(
        `capi backend: ${where} has ${planes.length} running control-plane machines; snapshots and restores are made in one (controlPlane.replicas 1)`,
      );
    return (planes[0] as { name: string }).name;
  }

  #docker(): { readonly cli: string; readonly run: DockerRun } {
    if (!this.#nodeDocker)
      throw new Error("capi backend: snapshots need the Docker CLI (--backend-option docker=<cli>)");
    return this.#nodeDocker;
  }

  /** Whether the machines of a sleeping CAPI Cluster can be stopped here, and which they are. */
  async #machineStop(cluster: TopologyCluster): Promise<MachineStop> {
    if (!onDockerMachines(cluster))
      return {
        can: false,
        why: `its machines are ${cluster.spec.infrastructureRef?.kind ?? "of no infrastructure"}'s, and only Docker machines (CAPD) can be stopped and started again on their disks`,
      };
    if (!this.#machines)
      return {
        can: false,
        why: "the engine has no Docker CLI to reach its Docker machines (--backend-option docker=<cli>)",
      };
    return this.#machines.stopOf(cluster.metadata.name);
  }

  /** The Cluster's CAPI Cluster as stored, with its management cluster; throws when there is none. */
  async #existingCluster(target: ClusterTarget) {
    await this.#pools.resolve(target);
    const found = await this.#clusters.stored(target);
    if (!found)
      throw new Error(`capi backend: cluster ${target.namespace}/${target.name} has no CAPI Cluster`);
    return found;
  }

  /** CAPI Clusters this backend made that are not yet seen gone, for tests and leak checks. */
  get clusterCount(): number {
    return this.#clusters.count;
  }

  /** CAPI Clusters as a remote-object recipe configuration: what is Cluster API's own. */
  #clusterKind(): RemoteObjectKind<TopologyCluster, CapiRecord, CapiSettings, Management> {
    return {
      noun: "CAPI Cluster",
      made: "made",
      logKey: "capiCluster",
      resource: CAPI_CLUSTERS,
      settings: (target) => capiSettings(target.settings, target.providerConfig),
      open: async (settings, providerConfig) => ({
        api: await this.#management(settings.management, providerConfig),
        namespace: settings.namespace,
      }),
      reopen: (record, providerConfig) => this.#management(record.management, providerConfig),
      // A pool member's record says so: the pools find where its members are by their records.
      record: (target: CapiTarget, settings, namespace, name, version) => {
        const member = target.poolMember;
        return recordOf(
          target,
          { ...placeOf(settings, target.providerConfig), namespace },
          name,
          version,
          member ? { id: member.id, pool: member.pool } : undefined,
        );
      },
      // A lost state file: where the settings and the deterministic name say it is (a bound member: see `resolve`).
      derivedRecord: (target) => {
        try {
          const settings = capiSettings(target.settings, target.providerConfig);
          return recordOf(target, placeOf(settings, target.providerConfig), capiClusterName(target), "");
        } catch {
          return undefined;
        }
      },
      nameOf: (record) => record.name,
      desired: (target, settings, _namespace, version) => desiredTopologyCluster(target, settings, version),
      runningVersion: (cluster) => {
        const version = cluster.spec.topology?.version;
        return version === undefined ? undefined : engineVersion(version);
      },
      changes: topologyChanges,
      changedFields: (changes) => [
        ...Object.keys((changes.spec as JsonObject | undefined)?.topology ?? {}).map((f) => `topology.${f}`),
        ...Object.keys((changes.metadata as JsonObject | undefined) ?? {}),
      ],
      ownedBy,
      conflict,
      observation: (cluster, record, _target, outOfDate) => {
        const observation = hibernationObservation(
          cluster,
          topologyObservation(cluster, {
            now: this.#clock.now(),
            deletionTimeoutMs: record.deletionTimeoutMs,
          }),
        );
        return observation.exists && observation.phase === "ready" && outOfDate()
          ? { ...observation, outOfDate: true }
          : observation;
      },
      refusedCreate: (code, namespace, name, management) =>
        code === 404
          ? new Error(
              `cannot create CAPI Cluster ${namespace}/${name}: namespace ${namespace} does not exist on the management cluster at ${management.server}, or Cluster API is not installed there`,
            )
          : undefined,
      createdFields: (settings) => ({
        clusterClass: `${settings.clusterClass.namespace}/${settings.clusterClass.name}`,
      }),
    };
  }

  async #management(ref: KubeconfigSecretRef | undefined, providerConfig: string): Promise<Management> {
    let kubeConfig: KubeConfig;
    if (ref) {
      kubeConfig = (await readKubeconfigSecret(this.#readSecret, ref, providerConfig)).kubeConfig;
    } else if (this.#defaultManagement) {
      kubeConfig = this.#defaultManagement;
    } else {
      throw new Error(
        `ProviderConfig ${providerConfig} names no management cluster (settings.kubeconfigSecretRef) and the capi backend has no default (--backend-option kubeconfig=<file>, $KUBECONFIG or in-cluster)`,
      );
    }
    const server = kubeConfig.getCurrentCluster()?.server ?? "(no server)";
    return {
      server,
      ...apiClients(kubeConfig),
      error: (what, error) => managementError(server, what, error),
    };
  }
}

function conflict(cluster: TopologyCluster, target: ClusterTarget): Error {
  const labels = cluster.metadata.labels ?? {};
  const owner = labels[CAPI_BACKEND_KEYS.clusterNameLabel]
    ? `belongs to Cluster ${labels[CAPI_BACKEND_KEYS.clusterNamespaceLabel]}/${labels[CAPI_BACKEND_KEYS.clusterNameLabel]} (uid ${labels[CAPI_BACKEND_KEYS.clusterUidLabel]})`
    : "exists and was not made by the engine";
  return new Error(
    `CAPI Cluster ${cluster.metadata.namespace}/${cluster.metadata.name} ${owner}; Cluster ${target.namespace}/${target.name} cannot use it`,
  );
}

/** An error of a management-cluster call, with Cluster API's (or the API server's) own message. */
function managementError(server: string, what: string, error: unknown): Error {
  return remoteCallError(
    { refuser: "the management cluster", place: `management cluster at ${server}` },
    what,
    error,
  );
}

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/**
 * The `capi` backend. Its default management cluster (for ProviderConfigs without `settings.kubeconfigSecretRef`):
 * `--backend-option kubeconfig=<file>`, else the client's default ($KUBECONFIG, ~/.kube/config, in-cluster: in a
 * Pod, the engine's own API server). Records live in `capi.json` in the state folder, where pools are in `capi-pools.json`.
 * `--backend-option docker=<cli>` (else `docker` on PATH, if there is one): the Docker CLI whose engine runs Cluster
 * API's Docker machines (CAPD), whose containers a sleeping Cluster has stopped.
 */
export const createBackend: BackendFactory = (context: BackendContext) => {
  mkdirSync(context.stateDirectory, { recursive: true });
  const log = context.log.with({ backend: "capi" });
  let defaultManagement: KubeConfig | undefined = new KubeConfig();
  try {
    if (context.options.kubeconfig) defaultManagement.loadFromFile(context.options.kubeconfig);
    else defaultManagement.loadFromDefault();
    if (!defaultManagement.getCurrentCluster()) defaultManagement = undefined;
  } catch (error) {
    if (context.options.kubeconfig)
      throw new Error(
        `capi backend: cannot read kubeconfig ${context.options.kubeconfig}: ${(error as Error).message}`,
      );
    defaultManagement = undefined;
  }
  if (!defaultManagement)
    log.info(
      "no default management cluster: every ProviderConfig names its own (settings.kubeconfigSecretRef)",
    );
  // Docker machines (CAPD) are stopped while asleep where the engine has a Docker CLI: given, or `docker` on PATH.
  const docker = context.options.docker ?? onPath("docker");
  return new CapiBackend({
    readSecret: context.readSecret,
    ...(docker ? { docker } : {}),
    ...(context.options.etcdutl ? { etcdutl: context.options.etcdutl } : {}),
    ...(defaultManagement ? { defaultManagement } : {}),
    stateFile: join(context.stateDirectory, "capi.json"),
    placesFile: join(context.stateDirectory, "capi-pools.json"),
    clock: context.clock,
    log,
  });
};
