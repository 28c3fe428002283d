/** The `capi` backend's ProviderConfig settings: which ClusterClass, where Clusters go, what topology. Pure. */
import type { JsonObject, JsonValue } from "../api/common.ts";
import { type KubeconfigSecretRef, kubeconfigSecretRef } from "./shared/kubeconfig-secret.ts";
import { isObject, type SettingsFailure, settingsFailure, stringMap } from "./shared/settings.ts";

/** A worker pool of the topology: a MachineDeployment of one of the class's worker classes. */
export interface CapiWorkerPool {
  /** The class's worker class (`spec.workers.machineDeployments[].class` of the ClusterClass). */
  readonly class: string;
  /** The MachineDeployment's name within the Cluster's topology. */
  readonly name: string;
  readonly replicas: number;
}

/** A topology variable, as the Cluster's `spec.topology.variables` holds it. */
export interface CapiVariable {
  readonly name: string;
  readonly value: JsonValue;
}

/** `spec.settings` of a ProviderConfig with `backend: capi`, validated. */
export interface CapiSettings {
  /** The ClusterClass every Cluster of this config uses. */
  readonly clusterClass: { readonly namespace: string; readonly name: string };
  /** Where the CAPI Clusters are made (default: the ClusterClass's namespace). */
  readonly namespace: string;
  /**
   * The management cluster's kubeconfig (`settings.kubeconfigSecretRef`, as for `existing`); absent: the backend's
   * default management cluster (see docs/backends/capi.md).
   */
  readonly management?: KubeconfigSecretRef;
  readonly controlPlaneReplicas: number;
  readonly workers: readonly CapiWorkerPool[];
  readonly variables: readonly CapiVariable[];
  /** `spec.clusterNetwork` of every Cluster, as written (Cluster API validates it). */
  readonly clusterNetwork?: JsonObject;
  /** Put on every CAPI Cluster beside the Cluster's `metadata.open-control-plane.io/*` ones. */
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** After how long a deletion Cluster API has not finished is reported as stuck (default 15 min). */
  readonly deletionTimeoutMs: number;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DEFAULT_DELETION_TIMEOUT_MS = 15 * 60_000;

const example =
  "settings: { clusterClass: { namespace: <ns>, name: <class> }, namespace: <where Clusters go>, controlPlane: { replicas: 1 }, workers: [{ class: <worker class>, name: md-0, replicas: 1 }], variables: [{ name: <n>, value: <v> }] }";

/** Reads and checks `settings`; throws a message naming the ProviderConfig and what to write. */
export function capiSettings(settings: JsonObject | undefined, providerConfig: string): CapiSettings {
  const fail: SettingsFailure = settingsFailure(providerConfig, example);
  const classRef = settings?.clusterClass;
  if (!isObject(classRef))
    return fail("settings.clusterClass must name a ClusterClass ({ namespace, name })");
  const className = classRef.name;
  const classNamespace = classRef.namespace;
  if (typeof className !== "string" || !DNS_SUBDOMAIN.test(className))
    fail(`settings.clusterClass.name must be a ClusterClass name, not ${JSON.stringify(className)}`);
  if (typeof classNamespace !== "string" || !DNS_LABEL.test(classNamespace))
    fail(`settings.clusterClass.namespace must be a namespace, not ${JSON.stringify(classNamespace)}`);
  const namespace = settings?.namespace ?? classNamespace;
  if (typeof namespace !== "string" || !DNS_LABEL.test(namespace))
    fail(`settings.namespace must be the namespace for the CAPI Clusters, not ${JSON.stringify(namespace)}`);
  const management =
    settings?.kubeconfigSecretRef === undefined ? undefined : kubeconfigSecretRef(settings, providerConfig);
  const controlPlane = settings?.controlPlane;
  if (controlPlane !== undefined && !isObject(controlPlane)) fail("settings.controlPlane must be an object");
  const replicas = (controlPlane as JsonObject | undefined)?.replicas ?? 1;
  if (!Number.isInteger(replicas) || (replicas as number) < 1)
    fail(
      `settings.controlPlane.replicas must be a whole number of at least 1, not ${JSON.stringify(replicas)}`,
    );
  const metadata = settings?.metadata;
  if (metadata !== undefined && !isObject(metadata)) fail("settings.metadata must be an object");
  let deletionTimeoutMs = DEFAULT_DELETION_TIMEOUT_MS;
  const timeout = settings?.deletionTimeoutSeconds;
  if (timeout !== undefined) {
    if (!Number.isInteger(timeout) || (timeout as number) < 1)
      fail(
        `settings.deletionTimeoutSeconds must be a whole number of seconds, not ${JSON.stringify(timeout)}`,
      );
    deletionTimeoutMs = (timeout as number) * 1000;
  }
  const network = settings?.clusterNetwork;
  if (network !== undefined && !isObject(network)) fail("settings.clusterNetwork must be an object");
  return {
    clusterClass: { namespace: classNamespace as string, name: className as string },
    namespace: namespace as string,
    ...(management ? { management } : {}),
    controlPlaneReplicas: replicas as number,
    workers: workerPools(settings?.workers, fail),
    variables: variables(settings?.variables, fail),
    ...(network ? { clusterNetwork: network as JsonObject } : {}),
    labels: stringMap((metadata as JsonObject | undefined)?.labels, "settings.metadata.labels", fail),
    annotations: stringMap(
      (metadata as JsonObject | undefined)?.annotations,
      "settings.metadata.annotations",
      fail,
    ),
    deletionTimeoutMs,
  };
}

function workerPools(value: unknown, fail: SettingsFailure): CapiWorkerPool[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return fail("settings.workers must be a list of { class, name, replicas }");
  const names = new Set<string>();
  return value.map((entry, i) => {
    const where = `settings.workers[${i}]`;
    if (!isObject(entry)) return fail(`${where} must be { class, name, replicas }`);
    const { class: workerClass, name, replicas = 1 } = entry;
    if (typeof workerClass !== "string" || workerClass === "")
      fail(`${where}.class must name a worker class of the ClusterClass`);
    if (typeof name !== "string" || !DNS_LABEL.test(name))
      fail(`${where}.name must be a DNS label, not ${JSON.stringify(name)}`);
    if (names.has(name as string)) fail(`${where}.name ${name} is used twice`);
    names.add(name as string);
    if (!Number.isInteger(replicas) || (replicas as number) < 0)
      fail(`${where}.replicas must be a whole number of at least 0, not ${JSON.stringify(replicas)}`);
    return { class: workerClass as string, name: name as string, replicas: replicas as number };
  });
}

function variables(value: unknown, fail: SettingsFailure): CapiVariable[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return fail("settings.variables must be a list of { name, value }");
  const names = new Set<string>();
  return value.map((entry, i) => {
    if (!isObject(entry) || typeof entry.name !== "string" || entry.name === "" || !("value" in entry))
      return fail(`settings.variables[${i}] must be { name, value }`);
    if (names.has(entry.name)) fail(`settings.variables[${i}]: variable ${entry.name} is set twice`);
    names.add(entry.name);
    return { name: entry.name, value: entry.value as JsonValue };
  });
}
