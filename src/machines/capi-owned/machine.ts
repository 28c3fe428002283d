/**
 * The one statechart recipe of the kinds Cluster API owns (EngineCluster, EngineControlPlane): Pending →
 * Provisioning → the kind's serving state(s), Failed, Deleting. A kind gives its words, its phases, its
 * serving state and the guards that are its own (see {@link CapiOwnedMachineSpec}); the rest is said here.
 * Pure: no I/O, no clock. Pausing is decided before the machine (see `step.ts`): a paused machine does not move.
 */
import { type AnyStateMachine, setup } from "xstate";
import {
  acceptedVersion,
  type BackendClusterFacts,
  backendClusterGuards,
  deletingState,
  failedState,
} from "../backend-cluster/backend-cluster.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { PHASE_TAG, REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, observedMachineTypes, whenObserved } from "../shared/observed-guard.ts";

/** The facts of an object a CAPI Cluster owns. */
export interface CapiOwnedFacts extends BackendClusterFacts {
  /** Name of the CAPI Cluster that owns it (its ownerReference); undefined until CAPI sets it. */
  readonly owner: string | undefined;
  /** The kubeconfig Secret (when the backend gives admin access) and the ClusterEndpoint are current. */
  readonly published: boolean;
}

/** A guard of a CAPI-owned machine: a predicate over the facts of its `observed` event. */
export type CapiOwnedGuard = ReturnType<typeof whenObserved<never>>;

/** The guards every CAPI-owned machine has, by name; a kind adds its own (at least `publicationStale`). */
export type CapiOwnedGuardName =
  | "isBeingDeleted"
  | "versionRejected"
  | "readyToProvision"
  | "backendAbsent"
  | "backendReady"
  | "backendFailed"
  | "problemResolved"
  | "withoutOurFinalizer"
  | "noForeignFinalizers"
  | "backendNotDeleting";

/** The phases every CAPI-owned kind shows (`status.phase`); a kind adds those of its serving states. */
type FamilyPhase = "pending" | "provisioning" | "failed" | "deleting";

/** What a CAPI-owned kind says of its statechart; everything else is the family's. */
export interface CapiOwnedMachineSpec<F extends CapiOwnedFacts, Phase extends string, Own extends string> {
  /** The machine's id (the statechart's file name). */
  readonly id: string;
  /** The Kubernetes kind, e.g. `EngineCluster`. */
  readonly kind: string;
  /** What it holds at the backend: "cluster", "control plane". */
  readonly noun: string;
  /** The phase each state shows, after the contract's words. */
  readonly phases: Readonly<Record<FamilyPhase | Phase, string>>;
  /** The descriptions of the family's states that are the kind's own words. */
  readonly descriptions: { readonly pending: string; readonly failed: string; readonly deleting: string };
  /**
   * Whether the owner is ready for the spec to be judged, besides owning it and the profile being found
   * (a control plane waits for its Cluster's infrastructure).
   */
  readonly ownerReady: (facts: F) => boolean;
  /** The kind's own guards (`publicationStale`, and those its serving states use). */
  readonly guards: Readonly<Record<Own, CapiOwnedGuard>>;
  /** The state `provisioning` moves to once the backend reports ready. */
  readonly servingState: string;
  /** That state's config (the kind's part of the chart), given the tag of a phase. */
  serving(phase: (name: Phase) => string): object;
}

/** The phase tag of `name` in `phases`. */
const phaseTag =
  <P extends string>(phases: Readonly<Record<P, string>>) =>
  (name: P) =>
    `${PHASE_TAG}${phases[name]}`;

type Params<T> = ({ event }: { event: ObservedEvent<CapiOwnedFacts> }) => T;

/**
 * The `pending` state: nothing is built until a CAPI Cluster owns the object and the spec can be ordered
 * (`readyToProvision`), or refused (`versionRejected`).
 */
function pendingState(description: string, tags: readonly string[]) {
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
function provisioningState(description: string, tags: readonly string[], what: string, readyTarget: string) {
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
 * Leaving a serving state, checked first (before its own moves): deleted, lost or failed at the backend.
 * `at` is how the family's states are reached from there (`#<id>.` from a nested state).
 */
export const leaveServing = (at = "") =>
  [
    { guard: "isBeingDeleted", target: `${at}deleting` },
    { guard: "backendAbsent", target: `${at}provisioning` },
    { guard: "backendFailed", target: `${at}failed` },
  ] as const;

/**
 * The actions of every CAPI-owned machine, by name. Never executed here: transition() returns them as data
 * for the step to translate (`capiOwnedCommands`).
 */
export const capiOwnedActions = {
  addFinalizer: () => {},
  removeFinalizer: () => {},
  createCluster: (_: unknown, _params: { version: string | undefined }) => {},
  /** Upgrade the running cluster (a kind whose serving states upgrade). */
  updateCluster: (_: unknown, _params: { version: string | undefined }) => {},
  deleteCluster: () => {},
  /** Write the kubeconfig Secret (when the backend gives admin access) and the ClusterEndpoint. */
  publish: () => {},
  /** Delete the kubeconfig Secret and the ClusterEndpoint. */
  unpublish: () => {},
  recordEvent: (_: unknown, _params: EventRecord) => {},
};

/** The machine of the CAPI-owned kind `spec` describes: the family's guards and states, the kind's serving state. */
export function capiOwnedMachine<F extends CapiOwnedFacts, Phase extends string, Own extends string>(
  spec: CapiOwnedMachineSpec<F, Phase, Own>,
): AnyStateMachine {
  const when = whenObserved<F>;
  const shared = backendClusterGuards<F>();
  const phase = phaseTag(spec.phases);
  const what = `the ${spec.noun}`;
  /** Owned, its owner ready and its profile found: spec.version can be judged. */
  const ownedAndReady = (facts: F) =>
    facts.owner !== undefined && spec.ownerReady(facts) && facts.profileFound;
  // The chart is put together from parts, which XState's types cannot check by name (nor type a machine
  // generic in its facts): every guard and action it names is in `setup`, and the path-coverage test takes
  // every transition.
  return setup({
    types: observedMachineTypes<F>(),
    guards: {
      isBeingDeleted: shared.isBeingDeleted,
      /** Owned and ready, its profile found, and its version refused before anything was built. */
      versionRejected: when((facts) => ownedAndReady(facts) && facts.version?.kind !== "accepted"),
      /** Owned and ready, its profile found and its version resolves: it can be ordered. */
      readyToProvision: when((facts) => ownedAndReady(facts) && facts.version?.kind === "accepted"),
      backendAbsent: shared.backendAbsent,
      backendReady: shared.backendReady,
      backendFailed: shared.backendFailed,
      problemResolved: shared.problemResolved,
      withoutOurFinalizer: shared.withoutOurFinalizer,
      noForeignFinalizers: shared.noForeignFinalizers,
      backendNotDeleting: shared.backendNotDeleting,
      ...(spec.guards as Record<string, CapiOwnedGuard>),
    },
    actions: capiOwnedActions,
  }).createMachine({
    id: spec.id,
    context: {},
    initial: "pending",
    states: {
      pending: pendingState(spec.descriptions.pending, [REQUEUE.retry, phase("pending")]),
      provisioning: provisioningState(
        `Finalizer set, ${spec.noun} ordered at the backend; waiting for it to report ready with an endpoint.`,
        [REQUEUE.poll, phase("provisioning")],
        what,
        spec.servingState,
      ),
      [spec.servingState]: spec.serving(phase),
      failed: failedState(spec.descriptions.failed, [phase("failed")]),
      deleting: deletingState(
        spec.descriptions.deleting,
        [phase("deleting")],
        {
          kind: spec.kind,
          releasing: `The backend deletes ${what}, the kubeconfig Secret and ClusterEndpoint go; we wait until it is gone.`,
          entry: ["unpublish", "deleteCluster"],
        },
        `Deleting ${what}`,
      ),
    },
  } as never) as unknown as AnyStateMachine;
}
