/**
 * What the explanations of the kinds Cluster API owns (EngineCluster, EngineControlPlane) share: ignored,
 * paused, no status yet, their condition lines, and what provisioning and deleting wait for.
 */
import { CAPI_ANNOTATIONS, CAPI_CONDITIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import type { Condition, ObjectMeta } from "../../api/common.ts";
import { ANNOTATIONS, OPERATIONS } from "../../api/constants.ts";
import type { Explanation } from "../shared/explanation.ts";

/** What a kind says of its own states. */
export interface CapiOwnedKindWords {
  /** The kind's name, for a state its machine does not have. */
  readonly kind: string;
  /** What it holds at the backend: "the cluster", "the control plane". */
  readonly what: string;
  /** The conditions whose lines explain it, most telling first. */
  readonly conditions: readonly string[];
  /**
   * What `state` (neither provisioning nor deleting) waits for, given the owning CAPI Cluster; undefined
   * for a state the kind's machine does not have.
   */
  waitingFor(state: string, owner: string | undefined): string | undefined;
}

/** Explains `object` from what it stores: annotations, owner, state and its conditions. */
export function explainCapiOwned(
  object: {
    readonly metadata: ObjectMeta;
    readonly status?:
      | {
          readonly state?: string;
          readonly phase?: string;
          readonly conditions?: readonly Condition[];
        }
      | undefined;
  },
  ownerPaused: boolean | undefined,
  words: CapiOwnedKindWords,
): Explanation {
  const status = object.status;
  const state = status?.state || undefined;
  const base = { state, phase: status?.phase };
  const annotations = object.metadata.annotations ?? {};
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
  const waiting = waitingForState(state, owner, words);
  if (waiting === undefined) {
    why.push(`"${state}" is not a state of the ${words.kind} machine (hand-edited status?)`);
    waitingFor.push("the next reconcile");
  } else {
    waitingFor.push(waiting);
  }
  return { ...base, why, waitingFor };
}

function waitingForState(state: string, owner: string | undefined, words: CapiOwnedKindWords) {
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
      return words.waitingFor(state, owner);
  }
}
