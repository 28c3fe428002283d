/**
 * The EngineControlPlane kind's I/O half (the Cluster API side): the owner CAPI Cluster and the published
 * objects read from caches, the backend observed and commanded, the kubeconfig Secret (rotated when the
 * backend's admin credentials change) and the ClusterEndpoint written. Registered only with `--capi`.
 */

import { kubeconfigSecretName, owningCapiCluster } from "../../../api/cluster-api.ts";
import {
  CONTROLPLANE_API_VERSION,
  ENGINE_CONTROL_PLANE_ANNOTATIONS,
  ENGINE_CONTROL_PLANE_LABELS,
  type EngineControlPlane,
} from "../../../api/engine-control-plane.ts";
import { objectKey } from "../../../api/object-key.ts";
import type {
  CapiOwnedPublication as ControlPlanePublication,
  CapiOwnedCommand as EngineControlPlaneCommand,
  CapiOwnedObservation as EngineControlPlaneObservation,
} from "../../../machines/capi-owned/contract.ts";
import {
  controlPlanePausedBy,
  engineControlPlaneResponsibility,
  engineControlPlaneTarget,
  explainEngineControlPlane,
  stepEngineControlPlane,
  stepPausedEngineControlPlane,
} from "../../../machines/engine-control-plane/contract.ts";
import { ENGINE_CONTROL_PLANE_DEFINITION } from "../../../machines/engine-control-plane/definition.ts";
import type { RequeueTiming } from "../../../machines/shared/machine-tags.ts";
import type { MachineKind } from "../../machine-kind.ts";
import { CAPI_CACHES } from "../capi-owned/caches.ts";
import { capiOwnedWakes, ownerPausedFor, pausedReconciliation } from "../capi-owned/capi-owned.ts";
import {
  clusterEndpointName,
  deletePublished,
  kubeconfigFingerprint,
  type Publisher,
  writePublishedEndpoint,
  writePublishedKubeconfig,
} from "../capi-owned/publication.ts";
import { DEFAULT_CLUSTER_TIMING } from "../cluster/kind.ts";
import { profileOffer } from "../shared/profile-offer.ts";
import { CONTROL_PLANE_CACHES } from "./caches.ts";

/** What a paused control plane's reconcile observes: nothing (its step reads nothing of it). */
const NOTHING_LOOKED_AT: ControlPlanePublication = { kubeconfig: "notWanted", endpointCurrent: true };

const publisherOf = (controlPlane: EngineControlPlane): Publisher => ({
  apiVersion: CONTROLPLANE_API_VERSION,
  kind: "EngineControlPlane",
  metadata: controlPlane.metadata,
  uidLabel: ENGINE_CONTROL_PLANE_LABELS.uid,
});

/** The EngineControlPlane kind: Cluster API's ControlPlane contract (v1beta2) for managed control planes on the engine's backends. */
export const engineControlPlaneKind: MachineKind<
  EngineControlPlane,
  EngineControlPlaneObservation,
  EngineControlPlaneCommand,
  RequeueTiming
> = {
  definition: ENGINE_CONTROL_PLANE_DEFINITION,
  cache: CONTROL_PLANE_CACHES.engineControlPlanes,
  // It builds clusters as the Cluster kind does, and is timed alike; driven only with the Cluster API side on.
  timing: DEFAULT_CLUSTER_TIMING,
  enabled: (settings) => settings.enabled === true,
  wakes: capiOwnedWakes(
    CONTROL_PLANE_CACHES.engineControlPlanes,
    CONTROL_PLANE_CACHES.kubeconfigSecrets,
    ENGINE_CONTROL_PLANE_LABELS.uid,
  ),

  async open(controlPlane, context) {
    const { informers, backend, providerName, timing, log, kubeConfig, adminAccess } = context;
    const namespace = controlPlane.metadata.namespace ?? "";
    const ownerName = owningCapiCluster(controlPlane.metadata);
    const owner =
      ownerName === undefined
        ? undefined
        : informers.of(CAPI_CACHES.capiClusters).get(`${namespace}/${ownerName}`);
    const { profile, settings } = profileOffer(context, controlPlane.spec.profile);
    const responsibility = engineControlPlaneResponsibility(controlPlane, profile, context, owner);
    if (responsibility === "paused") {
      // Paused: only the Paused condition is written; no backend call, the machine does not move.
      const why = controlPlanePausedBy(controlPlane, owner) ?? "";
      return pausedReconciliation(NOTHING_LOOKED_AT, (object: EngineControlPlane, now) =>
        stepPausedEngineControlPlane({ controlPlane: object, why, now }),
      );
    }
    if (responsibility !== "ours") return undefined;
    const target = engineControlPlaneTarget(controlPlane, profile, settings);
    const uid = controlPlane.metadata.uid ?? "";
    /** What this reconcile published: the caches see it only later. */
    const publishedNow = new Set<"kubeconfig" | "endpoint">();

    /**
     * The fingerprint of the backend's current admin kubeconfig, asked of the backend at most once a resync
     * period (the engine's admin-access cache), so a backend that issues new short-lived credentials on every
     * call (Gardener) rotates the Secret once a period, not on every look. The Secret's annotation is what is compared.
     */
    const adminFingerprint = async (): Promise<string | undefined> => {
      const admin = await adminAccess.get(target, timing.resyncMs);
      return admin && kubeconfigFingerprint(admin.kubeconfig);
    };

    const publication = async (
      object: EngineControlPlane,
      backendReady: boolean,
    ): Promise<ControlPlanePublication> => {
      const secret = ownerName
        ? informers
            .of(CONTROL_PLANE_CACHES.kubeconfigSecrets)
            .get(`${namespace}/${kubeconfigSecretName(ownerName)}`)
        : undefined;
      const endpoint = informers
        .of(CAPI_CACHES.clusterEndpoints)
        .get(`${namespace}/${clusterEndpointName(object)}`);
      const published = object.spec.controlPlaneEndpoint;
      const ours = (labels: Readonly<Record<string, string>> | undefined) =>
        labels?.[ENGINE_CONTROL_PLANE_LABELS.uid] === object.metadata.uid;
      let kubeconfig: ControlPlanePublication["kubeconfig"];
      if (!backend.capabilities.adminAccess) kubeconfig = "notWanted";
      else if (publishedNow.has("kubeconfig")) kubeconfig = "current";
      else if (!secret || !ours(secret.metadata.labels)) kubeconfig = "missing";
      else {
        const recorded = (secret.metadata as { annotations?: Readonly<Record<string, string>> })
          .annotations?.[ENGINE_CONTROL_PLANE_ANNOTATIONS.kubeconfigSha256];
        const current = backendReady ? await adminFingerprint() : undefined;
        kubeconfig = current !== undefined && recorded !== current ? "stale" : "current";
      }
      return {
        kubeconfig,
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
      observe: async (object) => {
        const observed = ownerName ? await backend.observe(target) : { exists: false as const };
        return {
          backend: observed,
          publication: await publication(object, observed.exists && observed.phase === "ready"),
        };
      },
      step: (object, observation, { now, lastError }) =>
        stepEngineControlPlane({
          controlPlane: object,
          owner,
          profile,
          providerName,
          observation,
          ...(lastError === undefined ? {} : { lastError }),
          now,
          timing,
        }),
      async run(commands, object) {
        for (const command of commands) {
          log.info("backend command", {
            command: command.kind,
            engineControlPlane: objectKey(object),
            ...("version" in command ? { version: command.version } : {}),
          });
          switch (command.kind) {
            case "create":
              await backend.create(target, command.version);
              break;
            case "update":
              await backend.update(target, command.version);
              break;
            case "delete":
              adminAccess.forget(uid);
              await backend.delete(target);
              break;
            case "publish": {
              const publisher = publisherOf(object);
              if (command.kubeconfig) {
                const admin = await adminAccess.get(target, timing.resyncMs);
                if (!admin) throw new Error("the backend gives no admin access to the control plane yet");
                const fingerprint = kubeconfigFingerprint(admin.kubeconfig);
                await writePublishedKubeconfig(kubeConfig, publisher, command.capiCluster, admin.kubeconfig, {
                  [ENGINE_CONTROL_PLANE_ANNOTATIONS.kubeconfigSha256]: fingerprint,
                });
                publishedNow.add("kubeconfig");
              }
              await writePublishedEndpoint(kubeConfig, publisher, command.capiCluster, command.endpoint);
              publishedNow.add("endpoint");
              break;
            }
            case "unpublish":
              await deletePublished(kubeConfig, publisherOf(object), command.capiCluster);
              break;
          }
        }
      },
    };
  },

  describe: (command) =>
    command.kind === "publish"
      ? `publish (kubeconfig Secret, ClusterEndpoint) for Cluster ${command.capiCluster}`
      : "version" in command
        ? `${command.kind} (Kubernetes ${command.version})`
        : command.kind,

  async explain(controlPlane, read) {
    return explainEngineControlPlane(controlPlane, await ownerPausedFor(controlPlane, read));
  },
};
