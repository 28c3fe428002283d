/**
 * The `capi` backend: each Cluster is a Cluster API topology Cluster (cluster.x-k8s.io/v1beta2) of a ClusterClass,
 * on a Cluster API management cluster — any infrastructure Cluster API reaches.
 */

import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type {
  AdminAccess,
  BackendContext,
  BackendFactory,
  ClusterBackend,
  ConfigOffer,
  SecretReader,
} from "../api/backend-contract.ts";
import { BACKEND_CONTRACT_VERSION } from "../api/backend-contract.ts";
import { type Clock, systemClock } from "../api/clock.ts";
import { CAPI_CLUSTER_RESOURCE, CAPI_KUBECONFIG_SECRET, kubeconfigSecretName } from "../api/cluster-api.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { JsonObject } from "../api/common.ts";
import { apiStatusOf, errorMessage, isConflict, isNotFound } from "../api/error-message.ts";
import { type Logger, silentLogger } from "../api/logger.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { capiSettings } from "./capi-settings.ts";
import {
  CAPI_BACKEND_KEYS,
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
import { type KubeconfigSecretRef, readKubeconfigSecret } from "./existing.ts";
import { patchWorthSending, type SentPatch } from "./gardener-shoot.ts";

const CLUSTER_CLASSES = {
  group: CAPI_CLUSTER_RESOURCE.group,
  version: CAPI_CLUSTER_RESOURCE.version,
  plural: "clusterclasses",
} as const;
const CLUSTERS = {
  group: CAPI_CLUSTER_RESOURCE.group,
  version: CAPI_CLUSTER_RESOURCE.version,
  plural: CAPI_CLUSTER_RESOURCE.plural,
} as const;

/** Knobs of the capi backend. */
export interface CapiBackendOptions {
  /** Reads Secrets a ProviderConfig's `settings.kubeconfigSecretRef` names (a management cluster of its own). */
  readonly readSecret: SecretReader;
  /** The management cluster of ProviderConfigs that name none (`--backend-option kubeconfig=`, else the default). */
  readonly defaultManagement?: KubeConfig;
  /** JSON file recording which CAPI Cluster each Cluster has (so deletion works when its ProviderConfig is gone). */
  readonly stateFile: string;
  readonly clock?: Clock;
  readonly log?: Logger;
}

/** What the backend remembers of one Cluster: where its CAPI Cluster is. */
interface CapiRecord {
  readonly uid: string;
  readonly cluster: string;
  readonly providerConfig: string;
  /** The management cluster's kubeconfig Secret; absent: the default management cluster. */
  readonly management?: KubeconfigSecretRef;
  readonly namespace: string;
  readonly name: string;
  /** The version ordered, reported while the management cluster cannot be asked. */
  readonly version: string;
  readonly deletionTimeoutMs: number;
  /** Set once deletion was ordered: the record goes when the CAPI Cluster is seen gone. */
  readonly deleting?: boolean;
}

/** A management cluster: where it is and clients for it. */
interface Management {
  readonly server: string;
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
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
 * `<cluster>-kubeconfig` Secret Cluster API writes.
 *
 * Guarantees: one CAPI Cluster per Cluster (a deterministic name, labelled with the Cluster's uid: a CAPI Cluster of
 * another Cluster is never adopted, also after a restart or without the state file); Cluster API's refusals are
 * passed on with its message; no kubeconfig, key or token in an observation, a log or an error.
 */
export class CapiBackend implements ClusterBackend {
  readonly name = "capi";
  readonly capabilities = { adminAccess: true, oidc: false } as const;
  readonly #readSecret: SecretReader;
  readonly #defaultManagement?: KubeConfig;
  readonly #stateFile: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #records = new Map<string, CapiRecord>();
  /** The last patch sent per Cluster uid, and the CAPI Cluster generation it led to (see {@link #outOfDate}). */
  readonly #lastPatches = new Map<string, SentPatch>();
  /** The last offer read per ProviderConfig, for callers of the synchronous `supportedVersions` and `traits`. */
  readonly #offers = new Map<string, ConfigOffer>();

  constructor(options: CapiBackendOptions) {
    this.#readSecret = options.readSecret;
    if (options.defaultManagement) this.#defaultManagement = options.defaultManagement;
    this.#stateFile = options.stateFile;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log ?? silentLogger;
    this.#load();
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
      throw managementError(management, `reading ClusterClass ${classNamespace}/${className}`, error);
    }
    try {
      await management.core.readNamespace({ name: settings.namespace });
    } catch (error) {
      if (isNotFound(error))
        throw new Error(
          `namespace ${settings.namespace} for the CAPI Clusters does not exist on the management cluster at ${management.server} (settings.namespace of ProviderConfig ${name})`,
        );
      throw managementError(management, `reading namespace ${settings.namespace}`, error);
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
    const place = this.#place(target);
    if (!place) return { exists: false };
    let management: Management;
    let cluster: TopologyCluster | undefined;
    try {
      management = await this.#management(place.management, place.providerConfig);
      cluster = await this.#read(management, place.namespace, place.name);
    } catch (error) {
      if (!this.#records.has(target.uid)) return { exists: false }; // nothing ordered that we know of
      return {
        exists: true,
        phase: place.deleting ? "deleting" : "provisioning",
        version: place.version,
        message: (error as Error).message,
      };
    }
    if (!cluster || !ownedBy(cluster, target.uid)) {
      if (place.deleting) this.#forget(target.uid); // bookkeeping only: the CAPI Cluster is gone for good
      return { exists: false };
    }
    const observation = topologyObservation(cluster, {
      now: this.#clock.now(),
      deletionTimeoutMs: place.deletionTimeoutMs,
    });
    return observation.exists && observation.phase === "ready" && this.#outOfDate(target, cluster)
      ? { ...observation, outOfDate: true }
      : observation;
  }

  /**
   * Whether the CAPI Cluster differs from what the Cluster and its ProviderConfig ask now (workers, variables,
   * replicas, copied labels and annotations) at the version it has, so that an update would change it. Not when the
   * very patch was applied already and Cluster API has taken it in (its generation moved on) yet the difference
   * stays: then someone changes it back, and patching again would only loop.
   */
  #outOfDate(target: ClusterTarget, cluster: TopologyCluster): boolean {
    let changes: JsonObject | undefined;
    try {
      const settings = capiSettings(target.settings, target.providerConfig);
      const version = engineVersion(cluster.spec.topology?.version ?? "");
      changes = topologyChanges(cluster, desiredTopologyCluster(target, settings, version));
    } catch {
      return false; // no settings (the ProviderConfig is gone) or nothing an update could do
    }
    return patchWorthSending(changes, this.#lastPatches.get(target.uid), cluster.metadata.generation ?? 0);
  }

  async create(target: ClusterTarget, version: string): Promise<void> {
    const settings = capiSettings(target.settings, target.providerConfig);
    const management = await this.#management(settings.management, target.providerConfig);
    const desired = desiredTopologyCluster(target, settings, version);
    const { namespace } = settings;
    const name = desired.metadata.name;
    const existing = await this.#read(management, namespace, name);
    if (existing && !ownedBy(existing, target.uid)) throw conflict(existing, target);
    // Recorded before the CAPI Cluster is made: an engine killed in between finds it on restart (same name).
    this.#remember({
      uid: target.uid,
      cluster: `${target.namespace}/${target.name}`,
      providerConfig: target.providerConfig,
      ...(settings.management ? { management: settings.management } : {}),
      namespace,
      name,
      version,
      deletionTimeoutMs: settings.deletionTimeoutMs,
    });
    if (existing) {
      // It keeps its version here: changing versions is update's job, and never downwards.
      const running = engineVersion(existing.spec.topology?.version ?? version);
      return this.#bringInLine(
        management,
        target,
        existing,
        desiredTopologyCluster(target, settings, running),
      );
    }
    try {
      await management.custom.createNamespacedCustomObject({ ...CLUSTERS, namespace, body: desired });
      this.#log.info("CAPI Cluster created", {
        cluster: `${target.namespace}/${target.name}`,
        capiCluster: `${namespace}/${name}`,
        clusterClass: `${settings.clusterClass.namespace}/${settings.clusterClass.name}`,
        version,
      });
    } catch (error) {
      const code = apiStatusOf(error)?.code ?? 0;
      // Refused (validation, a webhook): no CAPI Cluster was made, so there is nothing to remember.
      if (code >= 400 && code < 500 && code !== 409) this.#forget(target.uid);
      if (code === 404)
        throw new Error(
          `cannot create CAPI Cluster ${namespace}/${name}: namespace ${namespace} does not exist on the management cluster at ${management.server}, or Cluster API is not installed there`,
        );
      if (code !== 409)
        throw managementError(management, `creating CAPI Cluster ${namespace}/${name}`, error);
      const raced = await this.#read(management, namespace, name);
      if (raced && !ownedBy(raced, target.uid)) throw conflict(raced, target);
    }
  }

  async update(target: ClusterTarget, version: string): Promise<void> {
    const place = this.#place(target);
    if (!place)
      throw new Error(
        `cannot update cluster ${target.namespace}/${target.name}: no CAPI Cluster was made for it`,
      );
    const settings = capiSettings(target.settings, target.providerConfig);
    const management = await this.#management(place.management, target.providerConfig);
    const stored = await this.#read(management, place.namespace, place.name);
    if (!stored || !ownedBy(stored, target.uid))
      throw new Error(
        `cannot update cluster ${target.namespace}/${target.name}: CAPI Cluster ${place.namespace}/${place.name} is gone`,
      );
    await this.#bringInLine(management, target, stored, desiredTopologyCluster(target, settings, version));
    const record = this.#records.get(target.uid);
    if (record) this.#remember({ ...record, version });
  }

  /** Deletes the CAPI Cluster; done once Cluster API has removed it (observe then says it is gone). */
  async delete(target: ClusterTarget): Promise<void> {
    const place = this.#place(target);
    if (!place) return;
    let management: Management;
    try {
      management = await this.#management(place.management, place.providerConfig);
    } catch (error) {
      throw new Error(
        `cannot delete CAPI Cluster ${place.namespace}/${place.name}: ${(error as Error).message}`,
      );
    }
    const stored = await this.#read(management, place.namespace, place.name);
    if (!stored || !ownedBy(stored, target.uid)) {
      this.#forget(target.uid);
      return;
    }
    const record = this.#records.get(target.uid);
    this.#remember({ ...(record ?? recordOf(target, place)), deleting: true });
    if (stored.metadata.deletionTimestamp) return;
    try {
      await management.custom.deleteNamespacedCustomObject({
        ...CLUSTERS,
        namespace: place.namespace,
        name: place.name,
      });
      this.#log.info("CAPI Cluster deletion ordered", {
        cluster: `${target.namespace}/${target.name}`,
        capiCluster: `${place.namespace}/${place.name}`,
      });
    } catch (error) {
      if (isNotFound(error)) return this.#forget(target.uid);
      throw managementError(management, `deleting CAPI Cluster ${place.namespace}/${place.name}`, error);
    }
  }

  /** The kubeconfig Cluster API wrote into `<cluster>-kubeconfig` (key `value`), once the cluster is ready. */
  async adminAccess(target: ClusterTarget): Promise<AdminAccess | undefined> {
    const place = this.#place(target);
    if (!place) return undefined;
    const observation = await this.observe(target);
    if (!observation.exists || observation.phase !== "ready") return undefined;
    const management = await this.#management(place.management, place.providerConfig);
    const secret = kubeconfigSecretName(place.name);
    try {
      const stored = await management.core.readNamespacedSecret({ namespace: place.namespace, name: secret });
      const value = stored.data?.[CAPI_KUBECONFIG_SECRET.key];
      if (!value)
        throw new Error(`Secret ${place.namespace}/${secret} has no key ${CAPI_KUBECONFIG_SECRET.key}`);
      return { kubeconfig: Buffer.from(value, "base64").toString("utf8") };
    } catch (error) {
      if (isNotFound(error)) return undefined; // Cluster API writes it shortly
      throw managementError(management, `reading Secret ${place.namespace}/${secret}`, error);
    }
  }

  /** CAPI Clusters this backend made that are not yet seen gone, for tests and leak checks. */
  get clusterCount(): number {
    return this.#records.size;
  }

  /**
   * Where the Cluster's CAPI Cluster is: from the record, else (a lost state file) from the Cluster's settings and
   * the deterministic name. Undefined when neither says.
   */
  #place(target: ClusterTarget): CapiRecord | undefined {
    const record = this.#records.get(target.uid);
    if (record) return record;
    try {
      const settings = capiSettings(target.settings, target.providerConfig);
      return recordOf(target, {
        ...(settings.management ? { management: settings.management } : {}),
        namespace: settings.namespace,
        name: capiClusterName(target),
        version: "",
        deletionTimeoutMs: settings.deletionTimeoutMs,
      });
    } catch {
      return undefined;
    }
  }

  async #bringInLine(
    management: Management,
    target: ClusterTarget,
    stored: TopologyCluster,
    desired: TopologyCluster,
  ): Promise<void> {
    const changes = topologyChanges(stored, desired);
    if (!changes) return;
    const namespace = stored.metadata.namespace ?? "";
    const metadata = {
      ...((changes.metadata as JsonObject | undefined) ?? {}),
      resourceVersion: stored.metadata.resourceVersion ?? null,
    };
    let patched: TopologyCluster;
    try {
      patched = (await management.custom.patchNamespacedCustomObject(
        { ...CLUSTERS, namespace, name: stored.metadata.name, body: { ...changes, metadata } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      )) as TopologyCluster;
    } catch (error) {
      if (isConflict(error))
        throw new Error(`CAPI Cluster ${namespace}/${stored.metadata.name} changed meanwhile; trying again`);
      throw managementError(management, `updating CAPI Cluster ${namespace}/${stored.metadata.name}`, error);
    }
    this.#lastPatches.set(target.uid, {
      changes: JSON.stringify(changes),
      generation: patched.metadata.generation ?? 0,
    });
    this.#log.info("CAPI Cluster updated", {
      capiCluster: `${namespace}/${stored.metadata.name}`,
      fields: [
        ...Object.keys((changes.spec as JsonObject | undefined)?.topology ?? {}).map((f) => `topology.${f}`),
        ...Object.keys((changes.metadata as JsonObject | undefined) ?? {}),
      ].join(","),
    });
  }

  async #read(management: Management, namespace: string, name: string): Promise<TopologyCluster | undefined> {
    try {
      return (await management.custom.getNamespacedCustomObject({
        ...CLUSTERS,
        namespace,
        name,
      })) as TopologyCluster;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw managementError(management, `reading CAPI Cluster ${namespace}/${name}`, error);
    }
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
    return {
      server: kubeConfig.getCurrentCluster()?.server ?? "(no server)",
      custom: kubeConfig.makeApiClient(CustomObjectsApi),
      core: kubeConfig.makeApiClient(CoreV1Api),
    };
  }

  #remember(record: CapiRecord): void {
    const known = this.#records.get(record.uid);
    if (known && JSON.stringify(known) === JSON.stringify(record)) return;
    this.#records.set(record.uid, record);
    this.#save();
  }

  #forget(uid: string): void {
    this.#lastPatches.delete(uid);
    if (this.#records.delete(uid)) this.#save();
  }

  #load(): void {
    let text: string;
    try {
      text = readFileSync(this.#stateFile, "utf8");
    } catch {
      return; // nothing made yet
    }
    for (const record of (JSON.parse(text) as { clusters?: CapiRecord[] }).clusters ?? [])
      this.#records.set(record.uid, record);
  }

  /** Writes every record atomically (temp file + rename). */
  #save(): void {
    writeFileSync(
      `${this.#stateFile}.tmp`,
      JSON.stringify({ clusters: [...this.#records.values()] }, null, 2),
    );
    renameSync(`${this.#stateFile}.tmp`, this.#stateFile);
  }
}

/** A record for `target` at `place`. */
function recordOf(
  target: ClusterTarget,
  place: Pick<CapiRecord, "management" | "namespace" | "name" | "version" | "deletionTimeoutMs">,
): CapiRecord {
  return {
    uid: target.uid,
    cluster: `${target.namespace}/${target.name}`,
    providerConfig: target.providerConfig,
    ...(place.management ? { management: place.management } : {}),
    namespace: place.namespace,
    name: place.name,
    version: place.version,
    deletionTimeoutMs: place.deletionTimeoutMs,
  };
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
function managementError(management: Management, what: string, error: unknown): Error {
  const status = apiStatusOf(error);
  if (status?.message)
    return new Error(`the management cluster refused ${what}: ${status.message}`, { cause: error });
  const line = errorMessage(error).split("\n")[0] ?? "";
  return new Error(
    `management cluster at ${management.server} unreachable while ${what}: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`,
    { cause: error },
  );
}

/** Built with the engine: the backend contract this engine implements. */
export const contractVersion = BACKEND_CONTRACT_VERSION;

/**
 * The `capi` backend. Its default management cluster (for ProviderConfigs without `settings.kubeconfigSecretRef`):
 * `--backend-option kubeconfig=<file>`, else the client's default ($KUBECONFIG, ~/.kube/config, in-cluster: in a
 * Pod, the engine's own API server). Records live in `capi.json` in the state folder.
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
  return new CapiBackend({
    readSecret: context.readSecret,
    ...(defaultManagement ? { defaultManagement } : {}),
    stateFile: join(context.stateDirectory, "capi.json"),
    clock: context.clock,
    log,
  });
};
