/** The Cluster statechart: Pending → Provisioning → Ready ⇄ Updating, Failed, Deleting. Pure: no I/O, no clock. */
import { setup } from "xstate";
import type { ClusterObservation } from "../../api/backend.ts";
import { backendRelease } from "../shared/backend-release.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, whenObserved } from "../shared/observed-guard.ts";
import { failureEvent } from "./failure-event.ts";
import type { VersionResolution } from "./kubernetes-version.ts";

/**
 * Everything one reconcile knows, computed level-based from the Cluster object, its profile and the
 * backend's observation. The machine never sees a watch verb, only these facts.
 */
export interface ClusterFacts {
  /** `metadata.deletionTimestamp` is set. */
  readonly deleting: boolean;
  /** Our finalizer is on the object (so the backend may hold a cluster for it). */
  readonly hasFinalizer: boolean;
  /** Finalizers of others, which deletion of the infrastructure waits for. */
  readonly foreignFinalizers: readonly string[];
  /** The ClusterProfile named by `spec.profile` exists (and is ours; foreign ones never reach the machine). */
  readonly profileFound: boolean;
  /** The version to build, or why there is none; `undefined` while the profile is missing. */
  readonly version: VersionResolution | undefined;
  /** What the backend reports. */
  readonly backend: ClusterObservation;
}

/** The one event: "here is what the world looks like now". */
export type ClusterEvent = ObservedEvent<ClusterFacts>;

const when = whenObserved<ClusterFacts>;

const accepted = (facts: ClusterFacts) =>
  facts.version?.kind === "accepted" ? facts.version.version : undefined;
const backendPhase = (facts: ClusterFacts) => (facts.backend.exists ? facts.backend.phase : undefined);

/** The Cluster machine: named guards and actions first, then the chart, which refers to them by name. */
export const clusterMachine = setup({
  types: {
    context: {} as Record<string, never>,
    events: {} as ClusterEvent,
  },
  guards: {
    isBeingDeleted: when((facts) => facts.deleting),
    versionRejected: when((facts) => facts.profileFound && facts.version?.kind !== "accepted"),
    /** The profile exists and the requested version resolves: the cluster can be ordered. */
    specAcceptable: when((facts) => facts.profileFound && facts.version?.kind === "accepted"),
    backendAbsent: when((facts) => !facts.backend.exists),
    backendReady: when((facts) => backendPhase(facts) === "ready"),
    backendFailed: when((facts) => backendPhase(facts) === "failed"),
    /**
     * Ready at the backend, but on another version than the one resolved from the spec, or otherwise out of
     * date with what the Cluster asks (the backend says so).
     */
    upgradeWanted: when((facts) => {
      const wanted = accepted(facts);
      return (
        facts.backend.exists &&
        facts.backend.phase === "ready" &&
        wanted !== undefined &&
        (facts.backend.version !== wanted || facts.backend.outOfDate === true)
      );
    }),
    /** Ready at the backend on exactly the wanted version, and up to date. */
    backendReadyAsWanted: when(
      (facts) =>
        facts.backend.exists &&
        facts.backend.phase === "ready" &&
        facts.backend.version === accepted(facts) &&
        facts.backend.outOfDate !== true,
    ),
    /** A failed cluster is retried once the spec resolves again and the backend no longer reports failure. */
    problemResolved: when(
      (facts) => facts.profileFound && facts.version?.kind === "accepted" && backendPhase(facts) !== "failed",
    ),
    withoutOurFinalizer: when((facts) => !facts.hasFinalizer),
    noForeignFinalizers: when((facts) => facts.foreignFinalizers.length === 0),
    backendNotDeleting: when((facts) => facts.backend.exists && facts.backend.phase !== "deleting"),
  },
  actions: {
    // Actions are never executed here: transition() returns them as data for the step to translate.
    addFinalizer: () => {},
    removeFinalizer: () => {},
    createCluster: (_, _params: { version: string | undefined }) => {},
    updateCluster: (_, _params: { version: string | undefined }) => {},
    deleteCluster: () => {},
    recordEvent: (_, _params: EventRecord) => {},
  },
}).createMachine({
  id: "cluster",
  context: {},
  initial: "pending",
  states: {
    pending: {
      description: "Waiting until the profile resolves and the version is acceptable; nothing exists yet.",
      // Only a missing profile keeps a Cluster here; its creation wakes the Cluster, the retry is a safety net.
      tags: [REQUEUE.retry],
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "versionRejected", target: "failed" },
        { guard: "specAcceptable", target: "provisioning" },
      ],
    },
    provisioning: {
      description: "Finalizer set, cluster ordered at the backend; waiting for it to report ready.",
      tags: [REQUEUE.poll],
      entry: [
        "addFinalizer",
        { type: "createCluster", params: ({ event }) => ({ version: accepted(event.facts) }) },
        {
          type: "recordEvent",
          params: ({ event }) => ({
            type: "Normal",
            reason: "Provisioning",
            message: `Creating the cluster with Kubernetes ${accepted(event.facts) ?? "(unknown)"}`,
          }),
        },
      ],
      on: {
        // A create that did not take (backend error, lost cluster) is ordered again: commands are idempotent.
        observed: { guard: "backendAbsent", target: "provisioning", reenter: true },
      },
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "versionRejected", target: "failed" },
        { guard: "backendFailed", target: "failed" },
        { guard: "backendReady", target: "ready" },
      ],
    },
    ready: {
      description: "The cluster runs and its endpoint is published.",
      tags: [REQUEUE.resync],
      entry: [
        {
          type: "recordEvent",
          params: ({ event }) => ({
            type: "Normal",
            reason: "Ready",
            message: `The cluster is ready${event.facts.backend.exists ? ` with Kubernetes ${event.facts.backend.version}` : ""}`,
          }),
        },
      ],
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "versionRejected", target: "failed" },
        { guard: "backendAbsent", target: "provisioning" },
        { guard: "backendFailed", target: "failed" },
        { guard: "upgradeWanted", target: "updating" },
      ],
    },
    updating: {
      description: "The spec asks for another version; the backend is upgrading.",
      tags: [REQUEUE.poll],
      entry: [
        { type: "updateCluster", params: ({ event }) => ({ version: accepted(event.facts) }) },
        {
          type: "recordEvent",
          params: ({ event }) => ({
            type: "Normal",
            reason: "Updating",
            message: `Updating the cluster to Kubernetes ${accepted(event.facts) ?? "(unknown)"}`,
          }),
        },
      ],
      on: {
        // Still idle on the old version: the update did not take, order it again.
        observed: { guard: "upgradeWanted", target: "updating", reenter: true },
      },
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "versionRejected", target: "failed" },
        { guard: "backendAbsent", target: "provisioning" },
        { guard: "backendFailed", target: "failed" },
        { guard: "backendReadyAsWanted", target: "ready" },
      ],
    },
    failed: {
      description:
        "A person must act: unsupported version, downgrade, or a cluster the backend reports failed.",
      entry: [{ type: "recordEvent", params: ({ event }) => failureEvent(event.facts) }],
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "problemResolved", target: "pending" },
      ],
    },
    deleting: {
      description: "Deletion requested: wait for others' finalizers, delete at the backend, then let go.",
      entry: [
        {
          type: "recordEvent",
          params: { type: "Normal", reason: "Deleting", message: "Deleting the cluster" },
        },
      ],
      ...backendRelease({
        kind: "Cluster",
        releasing: "The backend deletes the cluster; we wait until it reports it gone.",
        entry: ["deleteCluster"],
      }),
    },
  },
});

/** The machine's type, for helpers that take it as a value. */
export type ClusterMachine = typeof clusterMachine;
