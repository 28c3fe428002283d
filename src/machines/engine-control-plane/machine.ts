/**
 * The EngineControlPlane statechart (a Cluster API managed control plane): Pending → Provisioning →
 * Running (Ready ⇄ Updating, Refused), Failed, Deleting. Pure: no I/O, no clock. Pausing is decided before
 * the machine (see `step.ts`): a paused machine does not move.
 */
import { setup } from "xstate";
import {
  acceptedVersion,
  backendClusterGuards,
  deletingState,
  failedState,
  failureEvent,
} from "../cluster/backend-cluster.ts";
import {
  type CapiOwnedFacts,
  capiOwnedActions,
  pendingState,
  provisioningState,
  readyEvent,
} from "../cluster/capi-owned-states.ts";
import { PHASE_TAG, REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, whenObserved } from "../shared/observed-guard.ts";

/** The phases an EngineControlPlane shows (`status.phase`). */
export const ENGINE_CONTROL_PLANE_PHASES = {
  pending: "Pending",
  provisioning: "Provisioning",
  ready: "Ready",
  updating: "Updating",
  failed: "Failed",
  deleting: "Deleting",
} as const;

/**
 * Everything one reconcile knows, level-based, from the object, its owner, its profile and the backend:
 * the facts every kind holding a cluster at the backend has, and the control plane's own.
 */
export interface EngineControlPlaneFacts extends CapiOwnedFacts {
  /**
   * The owning Cluster reports its infrastructure provisioned (at once when it has no infrastructureRef):
   * a control plane provider waits for it before building (Cluster API's managed-endpoint proposal).
   */
  readonly infrastructureReady: boolean;
  /** The kubeconfig Secret holds the backend's current admin credentials, and the ClusterEndpoint is current. */
  readonly published: boolean;
}

/** The one event: "here is what the world looks like now". */
export type EngineControlPlaneEvent = ObservedEvent<EngineControlPlaneFacts>;

const when = whenObserved<EngineControlPlaneFacts>;
const phase = (name: keyof typeof ENGINE_CONTROL_PLANE_PHASES) =>
  `${PHASE_TAG}${ENGINE_CONTROL_PLANE_PHASES[name]}`;
const backendPhase = (facts: EngineControlPlaneFacts) =>
  facts.backend.exists ? facts.backend.phase : undefined;
/** Owned by a CAPI Cluster that reports its infrastructure, and the profile is found: spec.version can be judged. */
const ownedAndReady = (facts: EngineControlPlaneFacts) =>
  facts.owner !== undefined && facts.infrastructureReady && facts.profileFound;

/** Leaving the running control plane, checked first in each of its states (before their own moves). */
const leaveRunning = [
  { guard: "isBeingDeleted", target: "#engineControlPlane.deleting" },
  { guard: "backendAbsent", target: "#engineControlPlane.provisioning" },
  { guard: "backendFailed", target: "#engineControlPlane.failed" },
] as const;

/** The EngineControlPlane machine: named guards and actions first, then the chart, which refers to them by name. */
export const engineControlPlaneMachine = setup({
  types: {
    context: {} as Record<string, never>,
    events: {} as EngineControlPlaneEvent,
  },
  guards: {
    // isBeingDeleted, backendAbsent/Ready/Failed, upgradeWanted, backendReadyAsWanted, problemResolved and
    // the deleting guards mean what they mean for every kind holding a cluster at the backend.
    ...backendClusterGuards<EngineControlPlaneFacts>(),
    /** Owned, its infrastructure ready, its profile found, and spec.version refused before anything was built. */
    versionRejected: when((facts) => ownedAndReady(facts) && facts.version?.kind !== "accepted"),
    /** Owned by a CAPI Cluster whose infrastructure is ready, the profile exists and spec.version resolves. */
    readyToProvision: when((facts) => ownedAndReady(facts) && facts.version?.kind === "accepted"),
    /** spec.version asks for a downgrade, or for a version the profile does not offer (the cluster keeps running). */
    versionRefused: when((facts) => facts.profileFound && facts.version?.kind !== "accepted"),
    /** spec.version resolves again (fixed, or offered now). */
    versionAccepted: when((facts) => facts.version?.kind === "accepted"),
    /** Running, but the kubeconfig Secret or the ClusterEndpoint is missing or behind the backend. */
    publicationStale: when((facts) => backendPhase(facts) !== undefined && !facts.published),
  },
  actions: {
    ...capiOwnedActions,
    updateCluster: (_, _params: { version: string | undefined }) => {},
  },
}).createMachine({
  id: "engineControlPlane",
  context: {},
  initial: "pending",
  states: {
    pending: pendingState(
      "Waiting for a Cluster API Cluster to own it and report its infrastructure, for its profile, or for an acceptable version; nothing is built.",
      // Owner and infrastructure arrive as changes of watched objects; only a missing profile needs the retry.
      [REQUEUE.retry, phase("pending")],
    ),
    provisioning: provisioningState(
      "Finalizer set, control plane ordered at the backend; waiting for it to report ready with an endpoint.",
      [REQUEUE.poll, phase("provisioning")],
      "the control plane",
      "running",
    ),
    running: {
      description:
        "The control plane accepts requests: spec.controlPlaneEndpoint set once, kubeconfig Secret and ClusterEndpoint published, initialized and Available reported.",
      initial: "ready",
      entry: ["publish"],
      on: {
        // Someone deleted the Secret or the ClusterEndpoint, or the backend's admin credentials changed.
        observed: { guard: "publicationStale", actions: "publish" },
      },
      states: {
        ready: {
          description: "At rest on the version spec.version asks for.",
          tags: [REQUEUE.resync, phase("ready")],
          entry: [{ type: "recordEvent", params: readyEvent("Ready", "The control plane") }],
          always: [
            ...leaveRunning,
            { guard: "versionRefused", target: "refused" },
            { guard: "upgradeWanted", target: "updating" },
          ],
        },
        updating: {
          description:
            "spec.version asks for a newer version; the backend upgrades the running control plane.",
          tags: [REQUEUE.poll, phase("updating")],
          entry: [
            { type: "updateCluster", params: ({ event }) => ({ version: acceptedVersion(event.facts) }) },
            {
              type: "recordEvent",
              params: ({ event }) => ({
                type: "Normal",
                reason: "Updating",
                message: `Upgrading the control plane to Kubernetes ${acceptedVersion(event.facts) ?? "(unknown)"}`,
              }),
            },
          ],
          on: {
            // Still idle on the old version: the update did not take, order it again.
            observed: { guard: "upgradeWanted", target: "updating", reenter: true },
          },
          always: [
            ...leaveRunning,
            { guard: "versionRefused", target: "refused" },
            { guard: "backendReadyAsWanted", target: "ready" },
          ],
        },
        refused: {
          description:
            "spec.version is refused (a downgrade, or not offered): the control plane keeps its version and stays available; UpToDate says why.",
          tags: [REQUEUE.resync, phase("ready")],
          entry: [{ type: "recordEvent", params: ({ event }) => failureEvent(event.facts) }],
          always: [...leaveRunning, { guard: "versionAccepted", target: "ready" }],
        },
      },
    },
    failed: failedState(
      "A person must act: a version refused before anything was built, or a control plane the backend reports failed.",
      [phase("failed")],
    ),
    deleting: deletingState(
      "Deletion requested (by Cluster API, through the Cluster): delete at the backend, then let go.",
      [phase("deleting")],
      {
        kind: "EngineControlPlane",
        releasing:
          "The backend deletes the control plane, the kubeconfig Secret and ClusterEndpoint go; we wait until it is gone.",
        entry: ["unpublish", "deleteCluster"],
      },
      "Deleting the control plane",
    ),
  },
});

/** The machine's type, for helpers that take it as a value. */
export type EngineControlPlaneMachine = typeof engineControlPlaneMachine;
