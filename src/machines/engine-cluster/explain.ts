/** Why an EngineCluster is in its state and what it waits for, in words, from the object alone (pure, read-only). */
import { CAPI_ANNOTATIONS, CAPI_CONDITIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import { ANNOTATIONS, OPERATIONS } from "../../api/constants.ts";
import type { EngineCluster } from "../../api/engine-cluster.ts";
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
  const status = cluster.status;
  const state = status?.state || undefined;
  const base = { state, phase: status?.phase };
  const annotations = cluster.metadata.annotations ?? {};
  const condition = (type: string) => status?.conditions?.find((c) => c.type === type);
  const owner = owningCapiCluster(cluster.metadata);
  if (annotations[CAPI_ANNOTATIONS.managedBy] !== undefined) {
    return {
      ...base,
      why: [
        `annotated ${CAPI_ANNOTATIONS.managedBy}: its infrastructure is managed by "${annotations[CAPI_ANNOTATIONS.managedBy]}", the engine never touches it`,
      ],
      waitingFor: [
        "whoever manages it to set spec.controlPlaneEndpoint and status.initialization.provisioned",
      ],
    };
  }
  if (annotations[ANNOTATIONS.operation] === OPERATIONS.ignore) {
    return {
      ...base,
      why: [`annotated ${ANNOTATIONS.operation}: ${OPERATIONS.ignore}: the engine skips it entirely`],
      waitingFor: [`someone to remove the ${ANNOTATIONS.operation} annotation`],
    };
  }
  const why: string[] = [];
  const waitingFor: string[] = [];
  const paused = condition(CAPI_CONDITIONS.paused);
  if (annotations[CAPI_ANNOTATIONS.paused] !== undefined || ownerPaused || paused?.status === "True") {
    why.push(paused?.status === "True" ? `paused: ${paused.message}` : "paused");
    waitingFor.push(
      `someone to unpause it (remove annotation ${CAPI_ANNOTATIONS.paused}, or spec.paused of Cluster ${owner ?? "(its owner)"})`,
    );
  }
  if (state === undefined) {
    why.push("no engine has written its status yet");
    waitingFor.push("the engine with the Cluster API side on (is it running with --capi?)");
    return { ...base, why, waitingFor };
  }
  const ready = condition(CAPI_CONDITIONS.ready);
  if (ready) why.push(`Ready=${ready.status} (${ready.reason})${ready.message ? `: ${ready.message}` : ""}`);
  switch (state.split(".")[0]) {
    case "pending":
      waitingFor.push(
        owner === undefined
          ? "a Cluster API Cluster that names it in spec.infrastructureRef (CAPI then sets the ownerReference)"
          : `its ClusterProfile "${cluster.spec.profile}" and an offered version`,
      );
      break;
    case "provisioning":
      waitingFor.push("the backend to report the cluster ready with an endpoint (the controller polls it)");
      break;
    case "provisioned":
      waitingFor.push(
        `nothing: provisioned for Cluster ${owner ?? "(none)"}; CAPI moves its Cluster to Provisioned. It moves when the Cluster is deleted or the backend loses or fails it`,
      );
      break;
    case "failed":
      waitingFor.push(
        "a person: an offered spec.kubernetes.version, a fix at the backend, or deleting the Cluster",
      );
      break;
    case "deleting":
      waitingFor.push(
        state === "deleting.blocked"
          ? "the other finalizers to go; nothing is deleted at the backend until then"
          : state === "deleting.releasing"
            ? "the backend to report the cluster gone; then our finalizer is removed"
            : "the API server to delete the object",
      );
      break;
    default:
      why.push(`"${state}" is not a state of the EngineCluster machine (hand-edited status?)`);
      waitingFor.push("the next reconcile");
  }
  return { ...base, why, waitingFor };
}
