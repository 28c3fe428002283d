/** Why a Cluster is in its state and what it waits for, in words, from the object alone (pure, read-only). */

import type { Cluster } from "../../api/cluster.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { Condition } from "../../api/common.ts";
import {
  CLUSTER_CONDITION_TYPES,
  CLUSTER_FINALIZERS,
  CLUSTER_LABELS,
  CLUSTER_REASONS,
} from "../../api/constants/cluster.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../api/constants/cluster-pool.ts";
import { RESTORE_FROM_ANNOTATION } from "../../api/constants/cluster-snapshot.ts";
import { HIBERNATE_ANNOTATION, HIBERNATION_CONDITION } from "../../api/constants/hibernation.ts";
import { ANNOTATIONS, CONDITION_TYPES, LABELS, OPERATIONS, REASONS } from "../../api/constants.ts";
import { HANDOVER_ANNOTATION } from "../../api/move.ts";
import { parsePoolMemberAnnotation } from "../cluster-pool/claim.ts";
import type { Explanation } from "../shared/explanation.ts";
import type { clusterMachine } from "./machine.ts";

/** The Cluster's profile as far as the reader could see it. */
export type ProfileLookup =
  | { readonly found: true; readonly profile: ClusterProfile }
  | { readonly found: false }
  /** Not readable (e.g. no RBAC): nothing is said about it. */
  | { readonly found: "unknown" };

/** What a person on call needs to know about one Cluster. */
export type ClusterExplanation = Explanation;

/** Every guard of the Cluster machine, as a person would say it (the `explain` command lists the exits). */
export const CLUSTER_GUARD_PHRASES: Readonly<
  Record<keyof typeof clusterMachine.implementations.guards, string>
> = {
  isBeingDeleted: "the Cluster is being deleted",
  versionRejected: "the requested version is refused (not offered, or a downgrade)",
  specAcceptable: "the profile exists and offers the requested version",
  backendAbsent: "the backend has no cluster for it",
  backendNeedsCreate: "the backend has no cluster for it, or reports it incomplete",
  backendReady: "the backend reports the cluster ready with an endpoint",
  backendFailed: "the backend reports the cluster failed",
  failedOutOfDate:
    "the backend reports the cluster failed with what it no longer asks (e.g. a deleted settings Rollout's settings): it is updated",
  failedAsAsked: "the backend reports the cluster failed with what it asks now",
  upgradeWanted: "the backend runs another version than the spec asks for",
  backendReadyAsWanted: "the backend reports ready on the wanted version",
  problemResolved: "the version is offered again and the backend no longer reports failure",
  withoutOurFinalizer: "our finalizer is gone",
  noForeignFinalizers: "no other finalizer remains",
  backendNotDeleting: "the backend stopped deleting (the delete is ordered again)",
  handoverPending:
    "its hand-over Secret from `openmcp-engine move` is still there (its state is imported, then it goes)",
  handoverTaken: "its hand-over Secret is gone: the backend holds the cluster's state",
  poolMemberOffered:
    "a warm pool has a cluster for it (an idle one, or one it claimed) and nothing is built for it yet",
  takenOverReady: "its hand-over Secret is gone and the backend reports the cluster ready",
  noPoolMemberOffered:
    "no pool cluster is to be claimed or bound any more: the backend has bound it, or another Cluster took it (then it is made as usual)",
};

/**
 * Explains `cluster` from what it stores (state, conditions, finalizers, labels, annotations) and its
 * profile, without asking the backend: the conditions already carry what the backend reported last.
 */
export function explainCluster(cluster: Cluster, profile: ProfileLookup): ClusterExplanation {
  const status = cluster.status;
  const stored = status?.providerStatus?.state;
  const state = typeof stored === "string" && stored !== "" ? stored : undefined;
  const why: string[] = [];
  const waitingFor: string[] = [];
  const base = { state, phase: status?.phase };

  if (cluster.metadata.annotations?.[ANNOTATIONS.operation] === OPERATIONS.ignore) {
    return {
      ...base,
      why: [`annotated ${ANNOTATIONS.operation}: ${OPERATIONS.ignore}: the engine skips it entirely`],
      waitingFor: [`someone to remove the ${ANNOTATIONS.operation} annotation`],
    };
  }
  if (profile.found === true && !cluster.metadata.finalizers?.includes(CLUSTER_FINALIZERS.cluster)) {
    const provider = profile.profile.spec.providerRef.name;
    const ours = cluster.metadata.labels?.[LABELS.provider];
    if (ours !== undefined && ours !== provider) {
      why.push(`labelled for provider "${ours}", but its profile now names provider "${provider}"`);
    }
  }
  if (state === undefined) {
    why.push("no engine has written its status yet");
    if (profile.found === false) {
      why.push(`ClusterProfile "${cluster.spec.profile}" does not exist`);
      waitingFor.push(`the ClusterProfile "${cluster.spec.profile}" (or a fixed spec.profile)`);
    } else if (profile.found === true) {
      const provider = profile.profile.spec.providerRef.name;
      why.push(`its ClusterProfile "${cluster.spec.profile}" belongs to provider "${provider}"`);
      waitingFor.push(`the controller of provider "${provider}" (is it running?)`);
    } else {
      waitingFor.push("the controller of the provider its profile names (is it running?)");
    }
    return { ...base, why, waitingFor };
  }

  const generation = cluster.metadata.generation ?? 0;
  if (status !== undefined && status.observedGeneration < generation) {
    why.push(
      `the status describes generation ${status.observedGeneration}, the spec is at ${generation}: the latest change is not reconciled yet`,
    );
    waitingFor.push("the controller to reconcile the latest change (is it running?)");
  }
  explainState(cluster, state, profile, why, waitingFor);
  explainOrigin(cluster, state, why);
  return { ...base, why, waitingFor };
}

/** Why a Cluster the engine has a machine state for is in that state, and what it waits for. */
function explainState(
  cluster: Cluster,
  state: string,
  profile: ProfileLookup,
  why: string[],
  waitingFor: string[],
): void {
  const conditions = cluster.status?.conditions ?? [];
  const condition = (type: string) => conditions.find((c) => c.type === type);
  const ready = condition(CONDITION_TYPES.clusterReady);
  const backendError = ready?.reason === REASONS.BackendError && ready.status === "False";
  const version = condition(CLUSTER_CONDITION_TYPES.versionSupported);
  const top = state.split(".")[0];

  switch (top) {
    case "pending":
      explainPending(cluster, condition(CLUSTER_CONDITION_TYPES.profileResolved), ready, why, waitingFor);
      break;
    case "provisioning":
      why.push(backendError ? `the last backend command failed: ${ready.message}` : backendSays(ready));
      waitingFor.push("the backend to report the cluster ready with an endpoint (the controller polls it)");
      break;
    case "ready":
      explainReady(ready, version, condition(HIBERNATION_CONDITION), why, waitingFor);
      break;
    case "updating": {
      const running = cluster.metadata.labels?.[CLUSTER_LABELS.k8sVersion];
      const wanted = version?.status === "True" ? version.message.replace(/^Kubernetes /, "") : undefined;
      why.push(
        `the spec asks for Kubernetes ${wanted ?? "another version"}${running ? `; the backend runs ${running}` : ""}`,
      );
      if (backendError) why.push(`the last backend command failed: ${ready.message}`);
      waitingFor.push(
        `the backend to report ready on ${wanted ?? "the wanted version"} (the controller polls it)`,
      );
      break;
    }
    case "hibernating":
    case "hibernated":
    case "waking":
      explainSleep(top, ready, why, waitingFor);
      break;
    case "claimingPoolMember":
      why.push(ready?.message || "a warm pool has a cluster for it");
      waitingFor.push(
        "its claim in the pool's status and the backend's bind of the pool cluster (the controller polls); it is made as usual if another Cluster takes the member first",
      );
      break;
    case "takingOver":
      why.push(
        `moved here by openmcp-engine move: its hand-over Secret ${cluster.metadata.annotations?.[HANDOVER_ANNOTATION] ?? ""} is not taken over yet${backendError ? ` (the last try failed: ${ready.message})` : ""}`,
      );
      waitingFor.push(
        "the backend to import the cluster's state from the hand-over Secret; then the Secret and the annotation go and it carries on where the backend says the cluster is",
      );
      break;
    case "failed":
      if (version?.status === "False") {
        why.push(versionRefusal(version));
        waitingFor.push(
          `a person: set spec.kubernetes.version to one the profile offers${offered(profile)}, or delete the Cluster`,
        );
      } else {
        why.push(backendSays(ready));
        waitingFor.push(
          "a person to fix the cause at the backend (it is retried once the backend no longer reports failure), or to delete the Cluster",
        );
      }
      break;
    case "deleting":
      explainDeleting(
        cluster,
        state,
        condition(CLUSTER_CONDITION_TYPES.deletionUnblocked),
        ready,
        why,
        waitingFor,
      );
      break;
    default:
      why.push(
        `"${state}" is not a state of the Cluster machine (hand-edited status?); the next step restarts it`,
      );
      waitingFor.push("the next reconcile");
  }
}

/** What a Cluster says of where it came from: a tenant's namespaces, a warm pool, a snapshot it was cloned from. */
function explainOrigin(cluster: Cluster, state: string, why: string[]): void {
  const status = cluster.status;
  const tenantNamespaces = status?.providerStatus?.tenantNamespaces;
  if (Array.isArray(tenantNamespaces) && tenantNamespaces.length > 0) {
    why.push(
      `its backend grants admin of ${tenantNamespaces.length === 1 ? "namespace" : "namespaces"} ${tenantNamespaces.join(", ")} only: its tenant works there (status.providerStatus.tenantNamespaces)`,
    );
  }
  const poolMember = cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember];
  if (poolMember !== undefined) {
    const { pool, member } = parsePoolMemberAnnotation(poolMember);
    why.push(
      `it came from warm pool ${pool}: bound to pool cluster ${member}, made before the Cluster asked`,
    );
    // Never served yet: the member was asleep (a sleeping pool's), and is woken for it.
    if (state.split(".")[0] === "waking" && status?.apiServer === undefined)
      why.push(
        `pool cluster ${member} was asleep: it is woken for this Cluster, which is Ready once it serves`,
      );
  }
  const snapshot = cluster.metadata.annotations?.[RESTORE_FROM_ANNOTATION];
  if (snapshot !== undefined)
    why.push(
      `it was made from ClusterSnapshot ${snapshot} (a clone: its data, CA and keys; its own endpoint)`,
    );
}

/** Why a Cluster waits before anything is ordered: its profile or its ProviderConfig, or the next reconcile. */
function explainPending(
  cluster: Cluster,
  resolved: Condition | undefined,
  ready: Condition | undefined,
  why: string[],
  waitingFor: string[],
): void {
  if (resolved?.status === "False" && resolved.reason === CLUSTER_REASONS.ProviderConfigNotReady) {
    why.push(resolved.message);
    waitingFor.push("that ProviderConfig to be fixed: its Ready condition and its Events say what is wrong");
  } else if (resolved?.status === "False") {
    why.push(`ClusterProfile "${cluster.spec.profile}" does not exist`);
    waitingFor.push(
      `the ClusterProfile "${cluster.spec.profile}" to appear (retried every 30 s), or a fixed spec.profile`,
    );
  } else {
    why.push(ready?.message || "nothing has been ordered at the backend yet");
    waitingFor.push("the next reconcile, which orders the cluster");
  }
}

/** Why a Ready Cluster is (or, while its backend does not answer, seems) ready, and what would move it. */
function explainReady(
  ready: Condition | undefined,
  version: Condition | undefined,
  hibernation: Condition | undefined,
  why: string[],
  waitingFor: string[],
): void {
  why.push(ready?.status === "True" ? `ClusterReady: ${ready.message}` : backendSays(ready));
  if (version?.reason === CLUSTER_REASONS.DeprecatedVersion) why.push(version.message);
  if (hibernation?.status === "False") why.push(`Hibernation: ${hibernation.message}`);
  if (ready?.reason === REASONS.ObserveFailed) {
    waitingFor.push(
      "the backend to answer again (the controller retries with backoff); until then nothing is ordered",
    );
  } else if (ready?.reason === REASONS.BackendNotReady) {
    waitingFor.push(
      "the backend to report the cluster ready again (looked at every retry period, 30 s by default), or to report it lost or failed",
    );
  } else {
    waitingFor.push(
      "nothing: it is Ready. It moves when it is deleted, its version changes, or the backend loses or fails it",
    );
  }
}

/** Why a Cluster on its way to sleep, asleep or waking is there, and what it waits for. */
function explainSleep(
  state: string,
  ready: Condition | undefined,
  why: string[],
  waitingFor: string[],
): void {
  const failed =
    ready?.reason === REASONS.BackendError && ready.status === "False" ? ready.message : undefined;
  switch (state) {
    case "hibernating":
      why.push(`asked to sleep (annotation ${HIBERNATE_ANNOTATION}): ${backendSays(ready)}`);
      if (failed) why.push(`the last backend command failed: ${failed}`);
      waitingFor.push("the backend to report the cluster hibernated (the controller polls it)");
      return;
    case "hibernated":
      why.push(ready?.message || "asleep as asked");
      waitingFor.push(
        `nothing: it sleeps as asked. Set annotation ${HIBERNATE_ANNOTATION} to "false" (or remove it) to wake it; kubeconfigs given out before work again once it is Ready`,
      );
      return;
    case "waking":
      why.push(`asked to wake: ${backendSays(ready)}`);
      if (failed) why.push(`the last backend command failed: ${failed}`);
      waitingFor.push("the backend to report the cluster ready at its endpoint (the controller polls it)");
      return;
  }
}

function explainDeleting(
  cluster: Cluster,
  state: string,
  unblocked: Condition | undefined,
  ready: Condition | undefined,
  why: string[],
  waitingFor: string[],
): void {
  const others = (cluster.metadata.finalizers ?? []).filter((name) => name !== CLUSTER_FINALIZERS.cluster);
  if (state === "deleting.blocked") {
    why.push(
      unblocked?.status === "False" && unblocked.message !== ""
        ? unblocked.message
        : `waiting for finalizers: ${others.join(", ") || "(none left)"}`,
    );
    waitingFor.push("their owners to remove them; nothing is deleted at the backend until then");
  } else if (state === "deleting.releasing") {
    why.push(
      ready?.reason === REASONS.BackendError
        ? `the last backend command failed: ${ready.message}`
        : `the backend is deleting the cluster${backendDetail(ready)}`,
    );
    waitingFor.push("the backend to report the cluster gone; then our finalizer is removed");
  } else {
    why.push("nothing is left at the backend; our finalizer is removed");
    waitingFor.push(
      others.length > 0
        ? `the API server to delete the object once these finalizers go: ${others.join(", ")}`
        : "the API server to delete the object",
    );
  }
}

/** What the last observation of the backend said, from the ClusterReady condition. */
function backendSays(ready: Condition | undefined): string {
  if (!ready) return "no ClusterReady condition yet";
  const reported = /\(backend: ([a-z]+)(?:, (.*))?\)$/.exec(ready.message);
  if (reported) return `the backend reports ${reported[1]}${reported[2] ? `: ${reported[2]}` : ""}`;
  return `ClusterReady=${ready.status} (${ready.reason})${ready.message ? `: ${ready.message}` : ""}`;
}

function backendDetail(ready: Condition | undefined): string {
  const reported = ready ? /\(backend: ([a-z]+)(?:, (.*))?\)$/.exec(ready.message) : null;
  return reported ? ` (backend reports ${reported[1]}${reported[2] ? `: ${reported[2]}` : ""})` : "";
}

function versionRefusal(version: Condition): string {
  return version.reason === REASONS.DowngradeNotAllowed
    ? `downgrade refused: ${version.message}`
    : `version not offered: ${version.message}`;
}

function offered(profile: ProfileLookup): string {
  if (profile.found !== true) return "";
  const versions = (profile.profile.spec.supportedVersions ?? [])
    .filter((entry) => !entry.deprecated)
    .map((entry) => entry.version);
  return versions.length > 0 ? ` (${versions.join(", ")})` : "";
}
