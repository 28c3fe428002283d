/**
 * The one explanation recipe of the kinds Cluster API owns (EngineCluster, EngineControlPlane): externally
 * managed, ignored, paused, no status yet, their condition lines, what provisioning and deleting wait for,
 * and their guards in words. A kind gives its words ({@link CapiOwnedKindWords}).
 */
import { CAPI_ANNOTATIONS, CAPI_CONDITIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import type { Condition, ObjectMeta } from "../../api/common.ts";
import { ANNOTATIONS, OPERATIONS } from "../../api/constants.ts";
import type { Explanation } from "../shared/explanation.ts";
import type { CapiOwnedGuardName } from "./machine.ts";

/** An object a CAPI Cluster owns, as far as its explanation goes. */
export interface ExplainedObject {
  readonly metadata: ObjectMeta;
  readonly status?:
    | {
        readonly state?: string;
        readonly phase?: string;
        readonly conditions?: readonly Condition[];
      }
    | undefined;
}

/** What a kind says of its own states. */
export interface CapiOwnedKindWords<Obj extends ExplainedObject> {
  /** The kind's name, for a state its machine does not have. */
  readonly kind: string;
  /** What it holds at the backend: "the cluster", "the control plane". */
  readonly what: string;
  /** Whether `cluster.x-k8s.io/managed-by` hands it to someone else (the engine then never touches it). */
  readonly honoursManagedBy: boolean;
  /** The conditions whose lines explain it, most telling first. */
  readonly conditions: readonly string[];
  /**
   * What `state` (neither provisioning nor deleting) waits for, given the owning CAPI Cluster; undefined
   * for a state the kind's machine does not have.
   */
  waitingFor(state: string, owner: string | undefined, object: Obj): string | undefined;
}

/** Explains `object` from what it stores: annotations, owner, state and its conditions. */
export function explainCapiOwned<Obj extends ExplainedObject>(
  object: Obj,
  ownerPaused: boolean | undefined,
  words: CapiOwnedKindWords<Obj>,
): Explanation {
  const status = object.status;
  const state = status?.state || undefined;
  const base = { state, phase: status?.phase };
  const annotations = object.metadata.annotations ?? {};
  const managedBy = annotations[CAPI_ANNOTATIONS.managedBy];
  if (words.honoursManagedBy && managedBy !== undefined) {
    return {
      ...base,
      why: [
        `annotated ${CAPI_ANNOTATIONS.managedBy}: its infrastructure is managed by "${managedBy}", the engine never touches it`,
      ],
      waitingFor: [
        "whoever manages it to set spec.controlPlaneEndpoint and status.initialization.provisioned",
      ],
    };
  }
  const condition = (type: string) => status?.conditions?.find((c) => c.type === type);
  const owner = owningCapiCluster(object.metadata);
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
  for (const type of words.conditions) {
    const found = condition(type);
    if (found)
      why.push(`${type}=${found.status} (${found.reason})${found.message ? `: ${found.message}` : ""}`);
  }
  const waiting = waitingForState(state, owner, object, words);
  if (waiting === undefined) {
    why.push(`"${state}" is not a state of the ${words.kind} machine (hand-edited status?)`);
    waitingFor.push("the next reconcile");
  } else {
    waitingFor.push(waiting);
  }
  return { ...base, why, waitingFor };
}

function waitingForState<Obj extends ExplainedObject>(
  state: string,
  owner: string | undefined,
  object: Obj,
  words: CapiOwnedKindWords<Obj>,
) {
  switch (state.split(".")[0]) {
    case "provisioning":
      return `the backend to report ${words.what} ready with an endpoint (the controller polls it)`;
    case "deleting":
      return state === "deleting.blocked"
        ? "the other finalizers to go; nothing is deleted at the backend until then"
        : state === "deleting.releasing"
          ? `the backend to report ${words.what} gone; then our finalizer is removed`
          : "the API server to delete the object";
    default:
      return words.waitingFor(state, owner, object);
  }
}

/**
 * Every guard of a CAPI-owned machine in words: the family's, said with the kind's name and what it holds
 * (`noun`: "cluster", "control plane"), and the kind's own (`own`, which says `versionRejected` and
 * `readyToProvision` its way).
 */
export function capiOwnedGuardPhrases<Own extends string>(
  kind: string,
  noun: string,
  own: Readonly<Record<"versionRejected" | "readyToProvision" | Own, string>>,
): Readonly<Record<CapiOwnedGuardName | Own, string>> {
  const { versionRejected, readyToProvision, ...rest } = own;
  return {
    isBeingDeleted: `the ${kind} is being deleted (CAPI deletes it with its Cluster)`,
    versionRejected,
    readyToProvision,
    backendAbsent: `the backend has no ${noun} for it`,
    backendReady: `the backend reports the ${noun} ready with an endpoint`,
    backendFailed: `the backend reports the ${noun} failed`,
    ...rest,
    problemResolved: "the version is offered again and the backend no longer reports failure",
    withoutOurFinalizer: "our finalizer is gone",
    noForeignFinalizers: "no other finalizer remains",
    backendNotDeleting: "the backend stopped deleting (the delete is ordered again)",
  } as Readonly<Record<CapiOwnedGuardName | Own, string>>;
}
