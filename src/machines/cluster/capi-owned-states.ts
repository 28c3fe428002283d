/**
 * What the kinds Cluster API owns (EngineCluster, EngineControlPlane) share beyond every backend-held
 * cluster: the owner fact, and the state that orders the cluster once a CAPI Cluster owns the object.
 */

import type { EventRecord } from "../shared/machine-step.ts";
import type { ObservedEvent } from "../shared/observed-guard.ts";
import { acceptedVersion, type BackendClusterFacts } from "./backend-cluster.ts";

/** The facts of an object a CAPI Cluster owns. */
export interface CapiOwnedFacts extends BackendClusterFacts {
  /** Name of the CAPI Cluster that owns it (its ownerReference); undefined until CAPI sets it. */
  readonly owner: string | undefined;
}

type Params<T> = ({ event }: { event: ObservedEvent<CapiOwnedFacts> }) => T;

/**
 * The `pending` state: nothing is built until a CAPI Cluster owns the object and the spec can be ordered
 * (the kind's `readyToProvision`), or refused (its `versionRejected`).
 */
export function pendingState(description: string, tags: readonly string[]) {
  return {
    description,
    tags,
    always: [
      { guard: "isBeingDeleted", target: "deleting" },
      { guard: "versionRejected", target: "failed" },
      { guard: "readyToProvision", target: "provisioning" },
    ],
  } as const;
}

/**
 * The `provisioning` state: finalizer set, `what` (the cluster, the control plane) ordered at the backend
 * for the owner; ordered again while the backend has none; on to `readyTarget` once it reports ready.
 */
export function provisioningState<const Ready extends string>(
  description: string,
  tags: readonly string[],
  what: string,
  readyTarget: Ready,
) {
  const version: Params<{ version: string | undefined }> = ({ event }) => ({
    version: acceptedVersion(event.facts),
  });
  const provisioningEvent: Params<EventRecord> = ({ event }) => ({
    type: "Normal",
    reason: "Provisioning",
    message: `Creating ${what} for Cluster ${event.facts.owner ?? "(none)"} with Kubernetes ${acceptedVersion(event.facts) ?? "(unknown)"}`,
  });
  return {
    description,
    tags,
    entry: [
      "addFinalizer",
      { type: "createCluster", params: version },
      { type: "recordEvent", params: provisioningEvent },
    ],
    on: {
      // A create that did not take is ordered again: commands are idempotent.
      observed: { guard: "backendAbsent", target: "provisioning", reenter: true },
    },
    always: [
      { guard: "isBeingDeleted", target: "deleting" },
      { guard: "backendFailed", target: "failed" },
      { guard: "backendReady", target: readyTarget },
    ],
  } as const;
}

/** The Normal Event (`reason`) of `what` (the cluster, the control plane) the backend reports ready. */
export function readyEvent(reason: string, what: string): Params<EventRecord> {
  return ({ event }) => ({
    type: "Normal",
    reason,
    message: `${what} is ready${event.facts.backend.exists ? ` with Kubernetes ${event.facts.backend.version} at ${event.facts.backend.endpoint ?? ""}` : ""}`,
  });
}

/**
 * The actions of every CAPI-owned kind, by name. Never executed here: transition() returns them as data for
 * the step to translate. A kind adds its own.
 */
export const capiOwnedActions = {
  addFinalizer: () => {},
  removeFinalizer: () => {},
  createCluster: (_: unknown, _params: { version: string | undefined }) => {},
  deleteCluster: () => {},
  /** Write the kubeconfig Secret (when the backend gives admin access) and the ClusterEndpoint. */
  publish: () => {},
  /** Delete the kubeconfig Secret and the ClusterEndpoint. */
  unpublish: () => {},
  recordEvent: (_: unknown, _params: EventRecord) => {},
};
