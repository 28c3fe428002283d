/** Why a ClusterRequest is in its state and what it waits for, in words, from the object alone (pure, read-only). */
import type { ClusterRequest } from "../../api/cluster-request.ts";
import {
  CLUSTER_REQUEST_CONDITION_TYPES,
  CLUSTER_REQUEST_FINALIZERS,
  CLUSTER_REQUEST_REASONS,
} from "../../api/constants/cluster-request.ts";
import { REASONS } from "../../api/constants.ts";
import type { Explanation } from "../shared/explanation.ts";
import type { clusterRequestMachine } from "./machine.ts";
import { clusterRequestStateOf } from "./step.ts";

/** Every guard of the ClusterRequest machine, as a person would say it (the `explain` command lists the exits). */
export const CLUSTER_REQUEST_GUARD_PHRASES: Readonly<
  Record<keyof typeof clusterRequestMachine.implementations.guards, string>
> = {
  isBeingDeleted: "the ClusterRequest is being deleted",
  isMisconfigured:
    "the scheduler configuration cannot serve it (no configuration, or no mapping for its purpose)",
  isDenied: "it cannot be served as asked (a name clash, a trait no profile offers, unreadable annotations)",
  mustLetGo: "someone deletes the Cluster it holds",
  canPlace: "a Cluster is chosen for it (an existing one, or one to create)",
  isHeld: "its Cluster carries its finalizer (and prefix claim), and its grant records it",
  notHeld: "something of the placement went missing (finalizer, claim, grant, the Cluster itself)",
  placementIncomplete: "the chosen Cluster does not serve it yet",
  configurationServes: "the configuration now maps its purpose",
  notDenied: "the cause of the denial is gone",
  stillLettingGo: "the Cluster it held is still being deleted with its finalizer on it",
  notLettingGo: "it no longer holds the Cluster being deleted",
  releasedAndDone:
    "no Cluster holds anything for it, its grant is gone, and no Cluster deletion must be waited for",
  releasedWaiting: "everything is released, but waitForClusterDeletion asks to wait for its Cluster to go",
  clusterDeletionDone: "its Cluster is gone (or stays because others use it)",
};

/** Explains `request` from what it stores: deletion, phase, finalizers, status.cluster and its ClusterGranted condition. */
export function explainClusterRequest(request: ClusterRequest): Explanation & { readonly state: string } {
  const state = clusterRequestStateOf(request);
  const condition = request.status?.conditions?.find(
    (c) => c.type === CLUSTER_REQUEST_CONDITION_TYPES.clusterGranted,
  );
  const cluster = request.status?.cluster;
  const where = cluster ? `${cluster.namespace}/${cluster.name}` : undefined;
  const why: string[] = [];
  const waitingFor: string[] = [];
  const base = { state, phase: request.status?.phase };
  if (state.startsWith("deleting")) {
    const ours = request.metadata.finalizers?.includes(CLUSTER_REQUEST_FINALIZERS.request) ?? false;
    why.push(
      ours
        ? `being deleted: ${condition?.message || "the scheduler lets go of its Cluster and removes the grant"}`
        : "being deleted; the scheduler holds it no longer",
    );
    waitingFor.push(
      condition?.reason === CLUSTER_REQUEST_REASONS.WaitingForClusterDeletion
        ? `Cluster ${where ?? "(its Cluster)"} to be gone (waitForClusterDeletion)`
        : "the scheduler to remove its finalizer from the Cluster and delete the grant",
    );
    return { ...base, why, waitingFor };
  }
  if (!condition) {
    why.push("no scheduler has looked at it yet");
    waitingFor.push(
      "a scheduler: this engine without --no-schedule, or the openMCP operator (is one running?)",
    );
    return { ...base, why, waitingFor };
  }
  switch (condition.reason) {
    case REASONS.Granted:
      why.push(condition.message || `granted Cluster ${where}`);
      waitingFor.push(
        `nothing: it is Granted. An AccessRequest with requestRef ${request.metadata.namespace}/${request.metadata.name} gets access to the Cluster`,
      );
      break;
    case REASONS.ConfigurationProblem:
      why.push(`the scheduler configuration cannot serve it: ${condition.message}`);
      waitingFor.push(
        `a person: add a purposeMapping for "${request.spec.purpose}" to the scheduler configuration (it is reloaded on change)`,
      );
      break;
    case CLUSTER_REQUEST_REASONS.ClusterConflict:
    case CLUSTER_REQUEST_REASONS.MissingTrait:
    case CLUSTER_REQUEST_REASONS.InvalidRequest:
      why.push(`denied (${condition.reason}): ${condition.message}`);
      waitingFor.push(
        "a person: remove the cause (it is checked again on every change of Clusters, profiles and Purposes), or delete the request",
      );
      break;
    case CLUSTER_REQUEST_REASONS.WaitingForCluster:
    case CLUSTER_REQUEST_REASONS.Replacing:
      why.push(condition.message);
      waitingFor.push("the Cluster's deletion to finish; then it is made again under the same name");
      break;
    case REASONS.BackendError:
      why.push(`the last write failed: ${condition.message}`);
      waitingFor.push("the scheduler retries with backoff; see the request's Warning Events");
      break;
    default:
      why.push(condition.message || "being scheduled");
      waitingFor.push(
        "the scheduler to find its Cluster serving it and the grant written (it looks again every few seconds)",
      );
  }
  return { ...base, why, waitingFor };
}
