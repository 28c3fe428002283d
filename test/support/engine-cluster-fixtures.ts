/** Fixtures for pure EngineCluster step tests: stored EngineClusters, observations, step input, applied writes. */
import type { ClusterObservation } from "../../src/api/backend.ts";
import { CAPI_GROUP } from "../../src/api/cluster-api.ts";
import { INFRASTRUCTURE_API_VERSION } from "../../src/api/constants.ts";
import type { EngineCluster } from "../../src/api/engine-cluster.ts";
import type {
  EngineClusterStepInput,
  EngineClusterStepResult,
  Publication,
} from "../../src/machines/engine-cluster/step.ts";
import { applied as withOperations } from "../../src/machines/shared/json-patch.ts";
import { changesTo } from "../../src/runtime/patch-object.ts";
import { aProfile, NOW, PROVIDER, TIMING } from "./cluster-fixtures.ts";

export { NOW, PROVIDER, TIMING } from "./cluster-fixtures.ts";

/** What a CAPI Cluster's controller puts on the infrastructure object it owns. */
export const capiOwner = (name = "workload") => ({
  apiVersion: `${CAPI_GROUP}/v1beta2`,
  kind: "Cluster",
  name,
  uid: "c0ffee00-0000-4000-8000-000000000001",
  controller: true,
  blockOwnerDeletion: true,
});

/** An EngineCluster as the API server holds it; owned by CAPI Cluster `workload` unless `owned` is false. */
export function anEngineCluster(
  props: {
    owned?: boolean;
    annotations?: Record<string, string>;
    finalizers?: string[];
    version?: string;
  } = {},
): EngineCluster {
  return {
    apiVersion: INFRASTRUCTURE_API_VERSION,
    kind: "EngineCluster",
    metadata: {
      name: "workload",
      namespace: "capi",
      uid: "e0000000-0000-4000-8000-000000000001",
      generation: 1,
      resourceVersion: "100",
      ...(props.owned === false ? {} : { ownerReferences: [capiOwner()] }),
      ...(props.annotations ? { annotations: props.annotations } : {}),
      ...(props.finalizers ? { finalizers: props.finalizers } : {}),
    },
    spec: {
      profile: aProfile().metadata.name ?? "",
      ...(props.version ? { kubernetes: { version: props.version } } : {}),
    },
  };
}

/** Nothing published yet (the backend gives admin access). */
export const unpublished: Publication = { kubeconfig: "missing", endpointCurrent: false };
export const published: Publication = { kubeconfig: "current", endpointCurrent: true };

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
  publication: Publication = unpublished,
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

/** The three writes a step asks for, as JSON patches against `cluster`. */
export function engineWrites(cluster: EngineCluster, result: EngineClusterStepResult) {
  return {
    metadataPatch: changesTo(cluster, "metadata", result.desired.metadata),
    specPatch: changesTo(cluster, "spec", result.desired.spec),
    statusPatch: changesTo(cluster, "status", result.desired.status),
  };
}

/** What the API server would hold after the step's writes. */
export function engineApplied(cluster: EngineCluster, result: EngineClusterStepResult): EngineCluster {
  const { metadataPatch, specPatch, statusPatch } = engineWrites(cluster, result);
  let next = cluster;
  for (const patch of [metadataPatch, specPatch, statusPatch]) {
    if (patch.length === 0) continue;
    next = withOperations(next, patch);
    next = {
      ...next,
      metadata: { ...next.metadata, resourceVersion: String(Number(next.metadata.resourceVersion) + 1) },
    };
  }
  return next;
}
