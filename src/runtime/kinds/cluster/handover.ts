/**
 * A Cluster's backend state on its way between management clusters (`openmcp-engine move`): the engine on the
 * source hands it over into a Secret while the Cluster is paused; on the target, the Cluster's machine takes it
 * over (its `takingOver` state) before anything else is asked of the backend.
 */
import { CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import type { ClusterTarget } from "../../../api/backend.ts";
import type { Cluster } from "../../../api/cluster.ts";
import { CLUSTERS_API_VERSION } from "../../../api/constants.ts";
import { absentIfNotFound, isNotFound } from "../../../api/error-message.ts";
import {
  HANDOVER_ANNOTATION,
  HANDOVER_MESSAGE_ANNOTATION,
  HANDOVER_OWNER_LABEL,
  HANDOVER_STATE_ANNOTATION,
  handoverSecretName,
} from "../../../api/move.ts";
import type { HandoverFacts } from "../../../machines/cluster/machine.ts";
import type { CommandWriter, KindContext } from "../../machine-kind.ts";
import { type OwnerLabel, writeOwnedSecret } from "../shared/owned-secret.ts";

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
 * Target side, read for each look at a moved Cluster (one carrying the hand-over annotation, resumed): how its
 * hand-over Secret stands, for the step's facts. A Secret not made for this Cluster counts as gone.
 */
export async function handoverOf(
  cluster: Cluster,
  kubeConfig: KubeConfig,
): Promise<HandoverFacts | undefined> {
  const secret = cluster.metadata.annotations?.[HANDOVER_ANNOTATION];
  if (secret === undefined) return undefined;
  const found = await ownHandover(kubeConfig, cluster.metadata.namespace ?? "", secret, ownerOf(cluster));
  const state = found?.metadata?.annotations?.[HANDOVER_STATE_ANNOTATION];
  return { secret, state: state === "ready" || state === "refused" ? state : "gone" };
}

/**
 * Target side, the `takeOver` command: imports the state of the hand-over Secret `secretName` (when `ready`)
 * into the backend, then deletes the Secret through `writer`. Idempotent: an import finds the state imported
 * already, a Secret gone leaves nothing to do. The step then drops the hand-over annotation (see step.ts).
 */
export async function takeOver(
  cluster: Cluster,
  target: ClusterTarget,
  secretName: string,
  context: KindContext,
  writer: CommandWriter,
): Promise<void> {
  const { namespace = "", name = "" } = cluster.metadata;
  const secret = await ownHandover(context.kubeConfig, namespace, secretName, ownerOf(cluster));
  if (!secret) return;
  if (secret.metadata?.annotations?.[HANDOVER_STATE_ANNOTATION] === "ready") {
    const state = Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value, "base64").toString("utf8"),
      ]),
    );
    const backend = await context.backends.of(target);
    await backend.importCluster?.(target, state);
    context.log.info("backend state taken over", { cluster: `${namespace}/${name}` });
  }
  await writer.remove({
    group: "",
    version: "v1",
    plural: "secrets",
    namespace,
    name: secretName,
    uid: secret.metadata?.uid ?? "",
  });
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

/** The hand-over Secret `name` made for the owner (ready or refused); undefined when there is none. */
async function ownHandover(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
  owner: OwnerLabel,
): Promise<V1Secret | undefined> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const secret = await absentIfNotFound(() => core.readNamespacedSecret({ namespace, name }));
  return secret?.metadata?.labels?.[owner[0]] === owner[1] ? secret : undefined;
}
