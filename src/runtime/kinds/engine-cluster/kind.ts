/**
 * The EngineCluster kind's I/O half (the Cluster API side): the owner CAPI Cluster and the published
 * objects read from caches, the backend observed and commanded, the kubeconfig Secret and the
 * ClusterEndpoint written. Registered only when the Cluster API side is on (`--capi`).
 */
import { CAPI_ANNOTATIONS, kubeconfigSecretName, owningCapiCluster } from "../../../api/cluster-api.ts";
import { LABELS } from "../../../api/constants.ts";
import type { EngineCluster } from "../../../api/engine-cluster.ts";
import { objectKey } from "../../../api/object-key.ts";
import type {
  CapiOwnedCommand as EngineClusterCommand,
  CapiOwnedObservation as EngineClusterObservation,
  CapiOwnedPublication as Publication,
} from "../../../machines/capi-owned/contract.ts";
import {
  engineClusterResponsibility,
  engineClusterTarget,
  explainEngineCluster,
  pausedBy,
  stepEngineCluster,
  stepPausedEngineCluster,
} from "../../../machines/engine-cluster/contract.ts";
import { ENGINE_CLUSTER_DEFINITION } from "../../../machines/engine-cluster/definition.ts";
import type { RequeueTiming } from "../../../machines/shared/machine-tags.ts";
import type { MachineKind } from "../../machine-kind.ts";
import { CAPI_CACHES } from "../capi-owned/caches.ts";
import { capiOwnedWakes, ownerPausedFor, pausedReconciliation } from "../capi-owned/capi-owned.ts";
import {
  clusterEndpointName,
  deletePublication,
  writeClusterEndpoint,
  writeKubeconfigSecret,
} from "../capi-owned/publication.ts";
import { DEFAULT_CLUSTER_TIMING } from "../cluster/kind.ts";
import { profileOffer } from "../shared/profile-offer.ts";
import { ENGINE_CLUSTER_CACHES } from "./caches.ts";

/** What a paused EngineCluster's reconcile observes: nothing (its step reads nothing of it). */
const NOTHING_LOOKED_AT: Publication = { kubeconfig: "notWanted", endpointCurrent: false };

/**
 * The EngineCluster kind: Cluster API's InfraCluster contract (v1beta2) on the engine's backends. Driven
 * only with the Cluster API side on (`capi`): it watches Cluster API's own resources.
 */
export const engineClusterKind: MachineKind<
  EngineCluster,
  EngineClusterObservation,
  EngineClusterCommand,
  RequeueTiming
> = {
  definition: ENGINE_CLUSTER_DEFINITION,
  cache: ENGINE_CLUSTER_CACHES.engineClusters,
  // It builds clusters as the Cluster kind does, and is timed alike (`timing`).
  timing: DEFAULT_CLUSTER_TIMING,
  enabled: (settings) => settings.enabled === true,
  wakes: capiOwnedWakes(
    ENGINE_CLUSTER_CACHES.engineClusters,
    ENGINE_CLUSTER_CACHES.kubeconfigSecrets,
    LABELS.engineClusterUid,
  ),

  async open(cluster, context) {
    const { informers, backend, providerName, timing, log, kubeConfig } = context;
    const namespace = cluster.metadata.namespace ?? "";
    const owner = owningCapiCluster(cluster.metadata);
    const ownerPaused =
      owner !== undefined &&
      informers.of(CAPI_CACHES.capiClusters).get(`${namespace}/${owner}`)?.spec?.paused === true;
    const { profile, settings, defaultVersion } = profileOffer(context, cluster.spec.profile);
    const responsibility = engineClusterResponsibility(cluster, profile, context, ownerPaused);
    if (responsibility === "paused") {
      // Paused: only the Paused condition is written; no backend call, the machine does not move.
      const why = pausedBy(cluster, ownerPaused) ?? "";
      return pausedReconciliation(NOTHING_LOOKED_AT, (object: EngineCluster, now) =>
        stepPausedEngineCluster({ cluster: object, why, now }),
      );
    }
    if (responsibility !== "ours") return undefined;
    const target = engineClusterTarget(cluster, profile, settings);
    /** What this reconcile published: the caches see it only later. */
    const publishedNow = new Set<"kubeconfig" | "endpoint">();

    const publication = (object: EngineCluster): Publication => {
      const secret = owner
        ? informers
            .of(ENGINE_CLUSTER_CACHES.kubeconfigSecrets)
            .get(`${namespace}/${kubeconfigSecretName(owner)}`)
        : undefined;
      const endpoint = informers
        .of(CAPI_CACHES.clusterEndpoints)
        .get(`${namespace}/${clusterEndpointName(object)}`);
      const published = object.spec.controlPlaneEndpoint;
      const ours = (labels: Readonly<Record<string, string>> | undefined) =>
        labels?.[LABELS.engineClusterUid] === object.metadata.uid;
      return {
        kubeconfig: !backend.capabilities.adminAccess
          ? "notWanted"
          : publishedNow.has("kubeconfig") || (secret && ours(secret.metadata.labels))
            ? "current"
            : "missing",
        endpointCurrent:
          publishedNow.has("endpoint") ||
          (endpoint !== undefined &&
            ours(endpoint.metadata.labels) &&
            published !== undefined &&
            endpoint.spec.host === published.host &&
            endpoint.spec.port === published.port),
      };
    };

    return {
      // No backend call before a CAPI Cluster owns it.
      observe: async (object) => ({
        backend: owner ? await backend.observe(target) : { exists: false },
        publication: publication(object),
      }),
      step: (object, observation, { now, lastError }) =>
        stepEngineCluster({
          cluster: object,
          profile,
          providerName,
          observation,
          ...(defaultVersion ? { defaultVersion } : {}),
          ...(lastError === undefined ? {} : { lastError }),
          now,
          timing,
        }),
      async run(commands, object) {
        for (const command of commands) {
          log.info("backend command", { command: command.kind, engineCluster: objectKey(object) });
          switch (command.kind) {
            case "create":
              await backend.create(target, command.version);
              break;
            case "delete":
              await backend.delete(target);
              break;
            case "publish": {
              if (command.kubeconfig) {
                const admin = await backend.adminAccess(target);
                if (!admin) throw new Error("the backend gives no admin access to the cluster yet");
                await writeKubeconfigSecret(kubeConfig, object, command.capiCluster, admin.kubeconfig);
                publishedNow.add("kubeconfig");
              }
              await writeClusterEndpoint(kubeConfig, object, command.capiCluster, command.endpoint);
              publishedNow.add("endpoint");
              break;
            }
            case "unpublish":
              await deletePublication(kubeConfig, object, command.capiCluster);
              break;
          }
        }
      },
    };
  },

  describe: (command) =>
    command.kind === "publish"
      ? `publish (kubeconfig Secret, ClusterEndpoint) for Cluster ${command.capiCluster}`
      : command.kind,

  async explain(cluster, read) {
    const ownerPaused = await ownerPausedFor(cluster, read);
    return explainEngineCluster(
      cluster,
      ownerPaused || cluster.metadata.annotations?.[CAPI_ANNOTATIONS.paused] !== undefined,
    );
  },
};
