/** Why an AccessRequest is in its state and what it waits for, in words, from the object alone (pure, read-only). */
import type { AccessRequest } from "../../api/access-request.ts";
import type { Condition } from "../../api/common.ts";
import {
  ACCESS_REQUEST_CONDITION_TYPES,
  ACCESS_REQUEST_FINALIZERS,
  ACCESS_REQUEST_LABELS,
  ACCESS_REQUEST_REASONS,
} from "../../api/constants/access-request.ts";
import { CONDITION_TYPES, LABELS, REASONS } from "../../api/constants.ts";
import { referenceKey } from "../../api/object-key.ts";
import type { Explanation } from "../shared/explanation.ts";
import type { accessRequestMachine } from "./machine.ts";
import { needsPreparation, PREPARED_CONDITION } from "./preparation.ts";
import { accessStateOf } from "./step.ts";

/** What a person on call needs to know about one AccessRequest (its state is always known: read back from the object). */
export type AccessRequestExplanation = Explanation & { readonly state: string };

/** Every guard of the AccessRequest machine, as a person would say it (the `explain` command lists the exits). */
export const ACCESS_REQUEST_GUARD_PHRASES: Readonly<
  Record<keyof typeof accessRequestMachine.implementations.guards, string>
> = {
  isBeingDeleted: "the AccessRequest is being deleted",
  isDenied:
    "the request cannot be served as asked (a role that is not ours, no OIDC, invalid rules, an issuer kube-apiserver refuses or another request holds)",
  isServable: "the cause of the denial is gone: the request can be served",
  canGrant: "the Cluster is Ready, the backend gives access to it, and nothing denies the request",
  accessComplete: "every access object is in place and the Secret holds a valid credential",
  accessIncomplete: "the Cluster is reachable but an access object is missing or differs",
  secretNeedsRenewal: "the credential is due for renewal, or its Secret is gone",
  withoutOurFinalizer: "our finalizer is gone",
  nothingLeft:
    "nothing made for the request is left on the target cluster, or the Cluster is gone or not Ready (a Ready Cluster whose API server refuses or cannot be reached holds the request)",
};

/**
 * Explains `request` from what it stores (deletion, phase, finalizers, labels, conditions), without
 * reading the Cluster, the target cluster or the Secret: the conditions carry what the controllers saw
 * last. Never reads or shows a credential; the Secret is named, not opened.
 */
export function explainAccessRequest(request: AccessRequest): AccessRequestExplanation {
  const state = accessStateOf(request);
  return { state, phase: request.status?.phase, ...reasonsFor(request, state) };
}

/** Why a request is where it is, and what it waits for: one line each. */
interface Reasons {
  readonly why: string[];
  readonly waitingFor: string[];
}

function reasonsFor(request: AccessRequest, state: string): Reasons {
  if (state === "deleting.revoking") return explainRevoking(request);
  if (needsPreparation(request)) return explainUnprepared(request);
  const seen = seenOf(request);
  if (seen.clusterReady === undefined && seen.accessGranted === undefined) return explainUntouched(request);
  const generation = request.metadata.generation ?? 0;
  const lagging = seen.lagging
    ? [
        `the status describes generation ${request.status?.observedGeneration}, the spec is at ${generation}: the latest change is not reconciled yet`,
      ]
    : [];
  const reasons = reasonsInState(state, seen);
  return { why: [...lagging, ...reasons.why], waitingFor: reasons.waitingFor };
}

function reasonsInState(state: string, seen: Seen): Reasons {
  switch (state) {
    case "granted":
      return explainGranted(seen);
    case "denied":
      return explainDenied(seen);
    case "provisioning":
      return explainProvisioning(seen);
    default:
      return explainPending(seen);
  }
}

/** What the request's status says, as every state of a prepared request that a provider has acted on reads it. */
interface Seen {
  readonly request: AccessRequest;
  readonly clusterReady: Condition | undefined;
  readonly accessGranted: Condition | undefined;
  /** The status describes an older generation than the spec's. */
  readonly lagging: boolean;
  /** The name of the request's Secret, once it has one. */
  readonly secret: string | undefined;
  readonly failing: TargetFailure | undefined;
  /** Before the grant, a Cluster that is not ready, else a failing target, is what holds the request up. */
  readonly blocked: { why: string; waitingFor: string[] } | undefined;
}

function seenOf(request: AccessRequest): Seen {
  const status = request.status;
  const clusterReady = conditionOf(request, CONDITION_TYPES.clusterReady);
  const accessGranted = conditionOf(request, ACCESS_REQUEST_CONDITION_TYPES.accessGranted);
  const failing = targetFailure(accessGranted);
  const blocked =
    clusterReady?.status === "False"
      ? {
          why: `waiting for the Cluster: ${clusterReady.message}`,
          waitingFor: clusterWait(clusterReady, clusterNamed(request)),
        }
      : failing && { why: failing.why, waitingFor: [failing.waitingFor] };
  return {
    request,
    clusterReady,
    accessGranted,
    lagging: status !== undefined && status.observedGeneration < (request.metadata.generation ?? 0),
    secret: status?.secretRef?.name,
    failing,
    blocked,
  };
}

function conditionOf(request: AccessRequest, type: string): Condition | undefined {
  return (request.status?.conditions ?? []).find((c) => c.type === type);
}

/** Being deleted: what is removed, and what a failing target holds up. */
function explainRevoking(request: AccessRequest): Reasons {
  const why: string[] = [];
  const waitingFor: string[] = [];
  explainDeleting(request, conditionOf(request, CONDITION_TYPES.clusterReady), why, waitingFor);
  const failing = targetFailure(conditionOf(request, ACCESS_REQUEST_CONDITION_TYPES.accessGranted));
  if (failing) {
    why.push(failing.why);
    waitingFor.unshift(failing.waitingFor);
  }
  return { why, waitingFor };
}

/** Not prepared: the reference preparation could not resolve, or no preparation at all. */
function explainUnprepared(request: AccessRequest): Reasons {
  const prepared = conditionOf(request, PREPARED_CONDITION);
  if (prepared?.status === "False") {
    return { why: [`not prepared yet: ${prepared.message}`], waitingFor: [referenceToResolve(request)] };
  }
  return {
    why: ["not prepared yet: it has no provider and profile labels, and no preparation has looked at it"],
    waitingFor: [
      "AccessRequest preparation: an engine without --no-prepare-access-requests, or the openMCP operator (is it running?)",
    ],
  };
}

/** Prepared, but no provider's controller has written a condition. */
function explainUntouched(request: AccessRequest): Reasons {
  const labels = request.metadata.labels ?? {};
  const provider = labels[LABELS.provider];
  return {
    why: [
      `prepared for provider "${provider}" (profile "${labels[ACCESS_REQUEST_LABELS.profile]}"), but no provider has acted on it yet`,
    ],
    waitingFor: [`the controller of provider "${provider}" (is it running?)`],
  };
}

function explainGranted({ request, clusterReady, lagging, secret, failing }: Seen): Reasons {
  const why = [
    secret
      ? `access granted: the kubeconfig is in Secret ${secret} in namespace ${request.metadata.namespace} (its contents are not shown)`
      : "access granted",
  ];
  if (clusterReady?.status === "False") {
    why.push(
      `the Cluster is not reachable now: ${clusterReady.message}; the access is checked again once it is`,
    );
  }
  if (failing) {
    why.push(`${failing.why}; the access cannot be checked or its credential renewed meanwhile`);
    return { why, waitingFor: [failing.waitingFor] };
  }
  return {
    why,
    waitingFor: [
      lagging
        ? "preparation to set it back to Pending, then the controller grants it anew for the changed spec"
        : "nothing: it is Granted. The credential is renewed at 80 % of its validity; it moves when it is deleted or changed, or an access object on the target goes missing",
    ],
  };
}

function explainDenied({ accessGranted }: Seen): Reasons {
  return {
    why: [
      (accessGranted?.reason === REASONS.Denied ||
        accessGranted?.reason === ACCESS_REQUEST_REASONS.OutsideAdminScope) &&
      accessGranted.message !== ""
        ? `denied: ${accessGranted.message}`
        : "denied (no reason recorded)",
    ],
    waitingFor: [
      "a person: remove the cause or change the request (it is checked again on every look and goes back to Pending once it can be served), or delete it",
    ],
  };
}

function explainProvisioning({ request, accessGranted, secret, blocked }: Seen): Reasons {
  if (blocked) return { why: [blocked.why], waitingFor: [...blocked.waitingFor] };
  if (accessGranted?.status === "False" && accessGranted.reason === REASONS.BackendError) {
    return {
      why: [`the last attempt to grant it failed: ${accessGranted.message}`],
      waitingFor: [
        "the cause to go away (the controller retries with backoff and grants it then, untouched), or a person to change or delete the request",
      ],
    };
  }
  return {
    why: [
      `access is being granted on the target cluster: ServiceAccount, roles and bindings, then the kubeconfig in Secret ${secret ?? `${request.metadata.name}.kubeconfig`}`,
    ],
    waitingFor: [
      "the controller to find every access object in place and a valid credential in the Secret (it looks again every few seconds)",
    ],
  };
}

/** Pending (or any other state): held up, or not yet granting. */
function explainPending({ accessGranted, lagging, blocked }: Seen): Reasons {
  if (blocked) return { why: [blocked.why], waitingFor: [...blocked.waitingFor] };
  return {
    why: [accessGranted ? describe(accessGranted) : "the controller has not started granting it yet"],
    waitingFor: [
      lagging ? "the controller to reconcile the latest change (is it running?)" : "the next reconcile",
    ],
  };
}

function explainDeleting(
  request: AccessRequest,
  clusterReady: Condition | undefined,
  why: string[],
  waitingFor: string[],
): void {
  const finalizers = request.metadata.finalizers ?? [];
  const others = finalizers.filter((name) => name !== ACCESS_REQUEST_FINALIZERS.accessRequest);
  if (finalizers.includes(ACCESS_REQUEST_FINALIZERS.accessRequest)) {
    why.push(
      "being deleted: the ServiceAccount, roles and bindings made for it on the target cluster, and its Secret, are being removed",
    );
    if (clusterReady?.status === "False") {
      why.push(`the Cluster is not reachable (${clusterReady.message}): what was made there goes with it`);
    }
    waitingFor.push(
      "the controller to find nothing of it left on the target cluster (or the Cluster unreachable); then our finalizer is removed",
    );
    if (others.length > 0) waitingFor.push(`then the owners of ${others.join(", ")} to remove them`);
  } else if (others.length > 0) {
    why.push(`being deleted; nothing of ours holds it, waiting for finalizers: ${others.join(", ")}`);
    waitingFor.push("their owners to remove them");
  } else {
    why.push("being deleted; no finalizer holds it");
    waitingFor.push("the API server to delete the object");
  }
}

/** What preparation waits for to resolve the request's reference, and what a person can do about it. */
function referenceToResolve(request: AccessRequest): string {
  const { clusterRef, requestRef } = request.spec;
  if (clusterRef) {
    return `the Cluster reference to resolve: Cluster ${clusterRef.namespace}/${clusterRef.name} (spec.clusterRef) and its ClusterProfile must exist; preparation retries. spec.clusterRef cannot change: if it is wrong, delete the request and create another`;
  }
  if (requestRef) {
    return `the ClusterRequest reference to resolve: ClusterRequest ${requestRef.namespace}/${requestRef.name} (spec.requestRef) must be Granted with a Cluster that exists; preparation retries`;
  }
  return "a person: the request names no target (spec.clusterRef or spec.requestRef); delete it and create one that does";
}

/** The Cluster the request targets, once preparation has filled `spec.clusterRef`. */
function clusterNamed(request: AccessRequest): string | undefined {
  const ref = request.spec.clusterRef;
  return ref ? referenceKey(ref) : undefined;
}

/** What a request held by its Cluster waits for (ClusterReady=False, as the controller wrote it). */
function clusterWait(clusterReady: Condition, cluster: string | undefined): string[] {
  if (/gives no access/.test(clusterReady.message)) {
    return [
      "the backend to give admin access to the Cluster (a backend without admin access, like simulated, never does: use one that has it)",
    ];
  }
  const named = cluster ? `the Cluster ${cluster}` : "the target Cluster";
  return [
    `${named} to become Ready (the controller looks again every few seconds)`,
    ...(cluster ? [`\`explain cluster ${cluster}\` tells why it is not`] : []),
  ];
}

/** The reasons of a call on the target cluster that failed (the Cluster itself is Ready). */
const TARGET_FAILURES: ReadonlySet<string> = new Set([
  ACCESS_REQUEST_REASONS.TargetRefused,
  ACCESS_REQUEST_REASONS.TargetUnreachable,
  ACCESS_REQUEST_REASONS.TargetError,
]);

/** What a failing target means, and what ends it. */
interface TargetFailure {
  readonly why: string;
  readonly waitingFor: string;
}

/** What a failing target (AccessGranted=False with a target reason) means, and what ends it; undefined when it is not failing. */
function targetFailure(accessGranted: Condition | undefined): TargetFailure | undefined {
  if (accessGranted?.status !== "False" || !TARGET_FAILURES.has(accessGranted.reason)) return undefined;
  const retried = "the controller retries with backoff and goes on by itself then";
  switch (accessGranted.reason) {
    case ACCESS_REQUEST_REASONS.TargetRefused:
      return {
        why: `the target cluster refuses the engine: ${accessGranted.message}`,
        waitingFor: `a person to give the backend's admin access the rights it lacks (or to use a backend whose admin access has them); ${retried}`,
      };
    case ACCESS_REQUEST_REASONS.TargetUnreachable:
      return {
        why: `the target cluster cannot be reached: ${accessGranted.message}`,
        waitingFor: `its API server to answer at the address its admin kubeconfig names (is it running, is the address right?); ${retried}`,
      };
    default:
      return {
        why: `the last attempt failed: ${accessGranted.message}`,
        waitingFor: `the cause to go away; ${retried}`,
      };
  }
}

function describe(condition: Condition): string {
  return `${condition.type}=${condition.status} (${condition.reason})${condition.message ? `: ${condition.message}` : ""}`;
}
