/**
 * A Cluster's backend state on its way between management clusters (`openmcp-engine move`): the engine on the
 * source hands it over into a Secret while the Cluster is paused; the engine on the target takes it over
 * before it first reconciles the copy.
 */
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { ClusterTarget } from "../../../api/backend.ts";
import type { Cluster } from "../../../api/cluster.ts";
import { CLUSTERS_API_VERSION, RESOURCES } from "../../../api/constants.ts";
import { isNotFound } from "../../../api/error-message.ts";
import {
  HANDOVER_ANNOTATION,
  HANDOVER_MESSAGE_ANNOTATION,
  HANDOVER_OWNER_LABEL,
  HANDOVER_STATE_ANNOTATION,
  handoverSecretName,
} from "../../../api/move.ts";
import { Patch } from "../../../machines/shared/json-patch.ts";
import type { KindContext } from "../../machine-kind.ts";
import { patchObject } from "../../patch-object.ts";
import { deleteOwnedSecret, type OwnerLabel, writeOwnedSecret } from "../shared/owned-secret.ts";

const ownerOf = (cluster: Cluster): OwnerLabel => [HANDOVER_OWNER_LABEL, cluster.metadata.uid ?? ""];

/**
 * Source side, while the Cluster is paused: writes its hand-over Secret (owned by the Cluster), `ready` with
 * what the backend exports, or `refused` with why when the backend cannot hand its clusters over.
 */
export async function handOver(cluster: Cluster, target: ClusterTarget, context: KindContext): Promise<void> {
  const { namespace = "", name = "", uid = "" } = cluster.metadata;
  // Handed over already: nothing changes at the backend while the Cluster is paused.
  if (await handedOver(context.kubeConfig, namespace, handoverSecretName(name), ownerOf(cluster))) return;
  const backend = await context.backends.of(target);
  const movable = backend.exportCluster !== undefined && backend.importCluster !== undefined;
  const state = movable ? await backend.exportCluster?.(target) : undefined;
  await writeOwnedSecret(
    context.kubeConfig,
    {
      metadata: {
        namespace,
        name: handoverSecretName(name),
        labels: { [HANDOVER_OWNER_LABEL]: uid },
        annotations: movable
          ? { [HANDOVER_STATE_ANNOTATION]: "ready" }
          : {
              [HANDOVER_STATE_ANNOTATION]: "refused",
              [HANDOVER_MESSAGE_ANNOTATION]: `backend ${backend.name} cannot hand its clusters over to another engine (it has no exportCluster and importCluster, backend contract 1.5), so Cluster ${namespace}/${name} cannot move`,
            },
        ownerReferences: [{ apiVersion: CLUSTERS_API_VERSION, kind: "Cluster", name, uid }],
      },
      type: "engine.openmcp.cloud/handover",
      stringData: { ...state },
    },
    ownerOf(cluster),
    `the hand-over of Cluster ${namespace}/${name}`,
  );
}

/**
 * Target side, once the moved Cluster is resumed: imports the state of its hand-over Secret into the backend,
 * deletes the Secret, then the annotation that named it. True when it wrote the Cluster (this reconcile is
 * over: the write wakes the next one).
 */
export async function takeOver(
  cluster: Cluster,
  target: ClusterTarget,
  context: KindContext,
): Promise<boolean> {
  const secretName = cluster.metadata.annotations?.[HANDOVER_ANNOTATION];
  if (secretName === undefined) return false;
  const { namespace = "", name = "", resourceVersion = "" } = cluster.metadata;
  const state = await readHandover(context.kubeConfig, namespace, secretName, ownerOf(cluster));
  if (state) {
    const backend = await context.backends.of(target);
    await backend.importCluster?.(target, state);
    context.log.info("backend state taken over", { cluster: `${namespace}/${name}` });
  }
  await deleteOwnedSecret(context.kubeConfig, namespace, secretName, ownerOf(cluster));
  await patchObject(context.kubeConfig, { ...RESOURCES.Cluster, namespace, name, resourceVersion }, [
    Patch.remove(["metadata", "annotations", HANDOVER_ANNOTATION]),
  ]);
  return true;
}

/** Whether the hand-over Secret made for the owner exists (ready or refused). */
async function handedOver(kubeConfig: KubeConfig, namespace: string, name: string, owner: OwnerLabel) {
  try {
    const secret = await kubeConfig.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace, name });
    return (
      secret.metadata?.labels?.[owner[0]] === owner[1] &&
      secret.metadata?.annotations?.[HANDOVER_STATE_ANNOTATION] !== undefined
    );
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** The decoded state of a `ready` hand-over Secret made for the owner; undefined when there is none. */
async function readHandover(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
  owner: OwnerLabel,
): Promise<Record<string, string> | undefined> {
  try {
    const secret = await kubeConfig.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace, name });
    if (secret.metadata?.labels?.[owner[0]] !== owner[1]) return undefined;
    if (secret.metadata?.annotations?.[HANDOVER_STATE_ANNOTATION] !== "ready") return undefined;
    return Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value, "base64").toString("utf8"),
      ]),
    );
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
