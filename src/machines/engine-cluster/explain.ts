/** Why an EngineCluster is in its state and what it waits for, in words, from the object alone (pure, read-only). */
import { CAPI_ANNOTATIONS, CAPI_CONDITIONS } from "../../api/cluster-api.ts";
import type { EngineCluster } from "../../api/engine-cluster.ts";
import { explainCapiOwned } from "../cluster/capi-owned-explain.ts";
import type { Explanation } from "../shared/explanation.ts";
import type { engineClusterMachine } from "./machine.ts";

/** Every guard of the EngineCluster machine, as a person would say it. */
export const ENGINE_CLUSTER_GUARD_PHRASES: Readonly<
  Record<keyof typeof engineClusterMachine.implementations.guards, string>
> = {
  isBeingDeleted: "the EngineCluster is being deleted (CAPI deletes it with its Cluster)",
  versionRejected: "the requested version is refused (not offered, or a downgrade)",
  readyToProvision: "a CAPI Cluster owns it, its profile exists and offers the version",
  backendAbsent: "the backend has no cluster for it",
  backendReady: "the backend reports the cluster ready with an endpoint",
  backendFailed: "the backend reports the cluster failed",
  publicationStale: "the kubeconfig Secret or the ClusterEndpoint is missing",
  problemResolved: "the version is offered again and the backend no longer reports failure",
  withoutOurFinalizer: "our finalizer is gone",
  noForeignFinalizers: "no other finalizer remains",
  backendNotDeleting: "the backend stopped deleting (the delete is ordered again)",
};

/** Explains `cluster` from what it stores: annotations, owner, state and its Ready and Paused conditions. */
export function explainEngineCluster(cluster: EngineCluster, ownerPaused?: boolean): Explanation {
  const managedBy = cluster.metadata.annotations?.[CAPI_ANNOTATIONS.managedBy];
  if (managedBy !== undefined) {
    return {
      state: cluster.status?.state || undefined,
      phase: cluster.status?.phase,
      why: [
        `annotated ${CAPI_ANNOTATIONS.managedBy}: its infrastructure is managed by "${managedBy}", the engine never touches it`,
      ],
      waitingFor: [
        "whoever manages it to set spec.controlPlaneEndpoint and status.initialization.provisioned",
      ],
    };
  }
  return explainCapiOwned(cluster, ownerPaused, {
    kind: "EngineCluster",
    what: "the cluster",
    conditions: [CAPI_CONDITIONS.ready],
    waitingFor: (state, owner) => {
      switch (state.split(".")[0]) {
        case "pending":
          return owner === undefined
            ? "a Cluster API Cluster that names it in spec.infrastructureRef (CAPI then sets the ownerReference)"
            : `its ClusterProfile "${cluster.spec.profile}" and an offered version`;
        case "provisioned":
          return `nothing: provisioned for Cluster ${owner ?? "(none)"}; CAPI moves its Cluster to Provisioned. It moves when the Cluster is deleted or the backend loses or fails it`;
        case "failed":
          return "a person: an offered spec.kubernetes.version, a fix at the backend, or deleting the Cluster";
        default:
          return undefined;
      }
    },
  });
}
