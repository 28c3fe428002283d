/**
 * The Cluster statechart: Pending → Provisioning → Ready ⇄ Updating, Failed, Deleting; a Cluster asked to sleep
 * goes Ready → Hibernating → Hibernated → Waking → Ready; a new Cluster a warm pool can serve claims a pool member
 * first (Pending → ClaimingPoolMember → Pending → Provisioning, then → Waking when the member sleeps), and a Cluster moved here by `openmcp-engine move`
 * is taken over before anything else (any state but Deleting → TakingOver → Ready or Provisioning). Pure: no I/O,
 * no clock.
 */
import { setup } from "xstate";
import { CLUSTER_REASONS } from "../../api/constants/cluster.ts";
import { CLUSTER_PHASES } from "../../api/constants.ts";
import {
  acceptedVersion as accepted,
  type BackendClusterFacts,
  backendClusterGuards,
  backendClusterPredicates,
  deletingState,
  failedState,
  incompleteness,
} from "../backend-cluster/backend-cluster.ts";
import { actionsAsData, recordEvent } from "../shared/actions-as-data.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { PHASE_TAG, REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, observedMachineTypes, whenObserved } from "../shared/observed-guard.ts";

/**
 * A hand-over of `openmcp-engine move` for this Cluster (its hand-over annotation names the Secret): whether that
 * Secret is still there (`ready`: with the backend's state; `refused`: without) or `gone` (taken, or never there).
 */
export interface HandoverFacts {
  readonly secret: string;
  readonly state: "ready" | "refused" | "gone";
}

/** A warm pool's member for this Cluster: the one a pool records as its claim, else an idle one it may claim. */
export interface PoolMemberFacts {
  readonly pool: string;
  readonly member: string;
  /** The pool records this Cluster's claim on it (the backend may not have bound it yet). */
  readonly claimed: boolean;
}

/** What the Cluster's hibernate annotation asks, and whether its backend can do it (contract 1.6). */
export interface HibernationFacts {
  /** The annotation asks for the cluster asleep. */
  readonly wanted: boolean;
  /** The backend offers hibernate and wake. */
  readonly offered: boolean;
  /** The annotation's value when it is neither "true" nor "false" (then taken as awake). */
  readonly invalid?: string;
}

/**
 * Everything one reconcile knows, computed level-based from the Cluster object, its profile and the
 * backend's observation (see `backend-cluster.ts`, shared with the EngineCluster), the hand-over Secret of a
 * moved Cluster and the warm pools. The machine never sees a watch verb, only these facts.
 */
export interface ClusterFacts extends BackendClusterFacts {
  /** Absent: no hand-over annotation. */
  readonly handover?: HandoverFacts;
  /** Absent: no pool serves it (pools off, none for its ProviderConfig, none idle, or it has its cluster already). */
  readonly poolMember?: PoolMemberFacts;
  /** Absent: no hibernate annotation (awake). */
  readonly hibernation?: HibernationFacts;
}

/** The one event: "here is what the world looks like now". */
export type ClusterEvent = ObservedEvent<ClusterFacts>;

/** `status.phase` by state, as the openMCP rule names it; a Ready state shows Ready only while every condition is True. */
const phase = (name: keyof typeof CLUSTER_PHASES) => `${PHASE_TAG}${CLUSTER_PHASES[name]}`;

/** The Event of ordering the cluster: a Warning naming what is missing when the create repairs one. */
function provisioningEvent(facts: ClusterFacts): EventRecord {
  const missing = incompleteness(facts);
  return missing === undefined
    ? {
        type: "Normal",
        reason: "Provisioning",
        message: `Creating the cluster with Kubernetes ${accepted(facts) ?? "(unknown)"}`,
      }
    : {
        type: "Warning",
        reason: "Repairing",
        message: `The backend reports the cluster incomplete (${missing}); creating what is missing`,
      };
}

const handoverPending = (facts: ClusterFacts) =>
  facts.handover !== undefined && facts.handover.state !== "gone";

/** A member to claim or bind, for a live Cluster that can be built and has no cluster at the backend yet. */
const poolMemberOffered = (facts: ClusterFacts) =>
  facts.poolMember !== undefined &&
  !facts.deleting &&
  !facts.backend.exists &&
  backendClusterPredicates.specAcceptable(facts);

const phaseOf = (facts: ClusterFacts) => (facts.backend.exists ? facts.backend.phase : undefined);
/** Asked to sleep, by a backend that can. */
const sleepAsked = (facts: ClusterFacts) => facts.hibernation?.wanted === true && facts.hibernation.offered;
/**
 * Asked to sleep (by a backend that can), and still serving: the hibernate did not take (yet). Or its sleep halted
 * half-way for a step that is the engine's to order (`hibernating` and `outOfDate`, contract 1.6: e.g. Cluster API's
 * machines to stop once its workers are gone).
 */
const stillServing = (facts: ClusterFacts) =>
  sleepAsked(facts) &&
  (phaseOf(facts) === "ready" ||
    phaseOf(facts) === "updating" ||
    (phaseOf(facts) === "hibernating" && facts.backend.exists && facts.backend.outOfDate === true));
/** Asked to be awake, and asleep or going to sleep at the backend. */
const asleepUnasked = (facts: ClusterFacts) =>
  !sleepAsked(facts) && (phaseOf(facts) === "hibernated" || phaseOf(facts) === "hibernating");
/** Asked to sleep, and waking at the backend: a wake the engine died in, then asked to sleep again. */
const wakingThoughAsleepAsked = (facts: ClusterFacts) => sleepAsked(facts) && phaseOf(facts) === "waking";
/**
 * Asked to sleep, and still going to sleep at the backend (or halted half-way): a sleep ordered again by a reconcile
 * the engine died in before it recorded `hibernating` (after a wake it died in too).
 */
const goingToSleep = (facts: ClusterFacts) => sleepAsked(facts) && phaseOf(facts) === "hibernating";
/** Asked to be awake, and not serving yet: asleep, going to sleep, or waking (a wake the engine died in). */
const notAwakeUnasked = (facts: ClusterFacts) =>
  asleepUnasked(facts) || (!sleepAsked(facts) && phaseOf(facts) === "waking");

/**
 * Failed at the backend with what its target no longer asks: the backend reports it `outOfDate` (contract 1.1: only
 * for what an update can fix), e.g. settings a deleted settings Rollout gave it. An update to what it asks now may
 * repair it, so it is ordered rather than the Cluster left failed for a person.
 */
const failedOutOfDate = (facts: ClusterFacts) =>
  phaseOf(facts) === "failed" &&
  facts.backend.exists &&
  facts.backend.outOfDate === true &&
  backendClusterPredicates.specAcceptable(facts);

/** The Cluster's own guards, besides those every kind that holds a cluster shares. */
const clusterGuards = {
  failedOutOfDate: whenObserved(failedOutOfDate),
  /** Failed at the backend, and no update to what it asks now would help: a person must act. */
  failedAsAsked: whenObserved(
    (facts: ClusterFacts) => phaseOf(facts) === "failed" && !failedOutOfDate(facts),
  ),
  /** The hand-over Secret is still there: its state is imported (again) and the Secret deleted. */
  handoverPending: whenObserved(handoverPending),
  handoverTaken: whenObserved((facts: ClusterFacts) => !handoverPending(facts)),
  takenOverReady: whenObserved(
    (facts: ClusterFacts) => !handoverPending(facts) && backendClusterPredicates.backendReady(facts),
  ),
  poolMemberOffered: whenObserved(poolMemberOffered),
  noPoolMemberOffered: whenObserved((facts: ClusterFacts) => !poolMemberOffered(facts)),
  sleepAsked: whenObserved(sleepAsked),
  wakeAsked: whenObserved((facts: ClusterFacts) => !sleepAsked(facts)),
  stillServing: whenObserved(stillServing),
  asleepUnasked: whenObserved(asleepUnasked),
  notAwakeUnasked: whenObserved(notAwakeUnasked),
  wakingThoughAsleepAsked: whenObserved(wakingThoughAsleepAsked),
  goingToSleep: whenObserved(goingToSleep),
  backendHibernated: whenObserved((facts: ClusterFacts) => phaseOf(facts) === "hibernated"),
};

/** Where every hibernation state goes first: deleted, lost (made again), or failed at the backend. */
const HIBERNATION_EXITS = [
  { guard: "isBeingDeleted", target: "deleting" },
  { guard: "backendNeedsCreate", target: "provisioning" },
  { guard: "backendFailed", target: "failed" },
] as const;

/** Where a serving state (ready, updating) goes first: deleted, its version refused, lost (made again), or failed. */
const SERVING_EXITS = [
  { guard: "isBeingDeleted", target: "deleting" },
  { guard: "versionRejected", target: "failed" },
  { guard: "backendNeedsCreate", target: "provisioning" },
  { guard: "backendFailed", target: "failed" },
] as const;

/** Where `updating` goes first: as a serving state, but failed only with what it asks now (see failedOutOfDate). */
const UPDATING_EXITS = [
  { guard: "isBeingDeleted", target: "deleting" },
  { guard: "versionRejected", target: "failed" },
  { guard: "backendNeedsCreate", target: "provisioning" },
  { guard: "failedAsAsked", target: "failed" },
] as const;

/** Taken over first, in every state but deleting: the backend cannot answer for the Cluster before. */
const TAKE_OVER = { guard: "handoverPending", target: "takingOver" } as const;

/** The Cluster machine: named guards and actions first, then the chart, which refers to them by name. */
export const clusterMachine = setup({
  types: observedMachineTypes<ClusterFacts>(),
  guards: { ...backendClusterGuards<ClusterFacts>(), ...clusterGuards },
  actions: {
    ...actionsAsData("deleteCluster", "hibernateCluster", "wakeCluster"),
    createCluster: (_, _params: { version: string | undefined }) => {},
    updateCluster: (_, _params: { version: string | undefined }) => {},
    takeOver: (_, _params: { secret: string | undefined }) => {},
    claimPoolMember: (_, _params: { pool: string | undefined; member: string | undefined }) => {},
  },
}).createMachine({
  id: "cluster",
  context: {},
  initial: "pending",
  states: {
    // A Cluster moved here by `openmcp-engine move` (any state but deleting, as the source stored it) is taken
    // over before the backend is asked anything: it cannot answer for the cluster before the import.
    takingOver: {
      description:
        "Moved here by `openmcp-engine move`: the backend imports the cluster's state from the hand-over Secret, which then goes.",
      tags: [REQUEUE.poll, phase("progressing")],
      entry: [
        { type: "takeOver", params: ({ event }) => ({ secret: event.facts.handover?.secret }) },
        recordEvent({
          type: "Normal",
          reason: CLUSTER_REASONS.TakingOver,
          message: "Taking the cluster over from the hand-over of `openmcp-engine move`",
        }),
      ],
      on: {
        // The Secret is still there (the import failed, or the engine died before deleting it): again.
        observed: { guard: "handoverPending", target: "takingOver", reenter: true },
      },
      // Taken over: on where the backend reports the cluster; ready and provisioning move on from there as usual.
      always: [
        { guard: "takenOverReady", target: "ready" },
        { guard: "handoverTaken", target: "provisioning" },
      ],
    },
    pending: {
      description: "Waiting until the profile resolves and the version is acceptable; nothing exists yet.",
      // Only a missing profile keeps a Cluster here; its creation wakes the Cluster, the retry is a safety net.
      tags: [REQUEUE.retry, phase("progressing")],
      on: { observed: TAKE_OVER },
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "versionRejected", target: "failed" },
        { guard: "poolMemberOffered", target: "claimingPoolMember" },
        { guard: "specAcceptable", target: "provisioning" },
      ],
    },
    claimingPoolMember: {
      description:
        "A warm pool has a cluster for it: claim the member in the pool's status, then the backend binds it.",
      tags: [REQUEUE.poll, phase("progressing")],
      entry: [
        {
          type: "claimPoolMember",
          params: ({ event }) => ({
            pool: event.facts.poolMember?.pool,
            member: event.facts.poolMember?.member,
          }),
        },
      ],
      on: {
        // Not bound yet (the claim lost a race, or the engine died before the bind): claim or bind again.
        observed: { guard: "poolMemberOffered", target: "claimingPoolMember", reenter: true },
      },
      // Bound, or nothing left to claim (another Cluster took the member): pending decides as for any new Cluster
      // (provisioning adds the finalizer; its create finds a bound cluster whole and makes nothing).
      always: { guard: "noPoolMemberOffered", target: "pending" },
    },
    provisioning: {
      description: "Finalizer set, cluster ordered at the backend; waiting for it to report ready.",
      tags: [REQUEUE.poll, phase("progressing")],
      entry: [
        "addFinalizer",
        { type: "createCluster", params: ({ event }) => ({ version: accepted(event.facts) }) },
        {
          type: "recordEvent",
          params: ({ event }) => provisioningEvent(event.facts),
        },
      ],
      on: {
        // A create that did not take (backend error, lost cluster) is ordered again, as is one for a cluster
        // the backend reports incomplete: commands are idempotent, and create makes what is missing.
        observed: [TAKE_OVER, { guard: "backendNeedsCreate", target: "provisioning", reenter: true }],
      },
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "versionRejected", target: "failed" },
        { guard: "backendFailed", target: "failed" },
        { guard: "backendReady", target: "ready" },
        // Its cluster sleeps or wakes (a sleeping pool's member it took, a wake the engine died in): woken before
        // it is Ready, never Ready on a cluster that does not serve. (A Cluster asking to sleep is given no
        // sleeping member.)
        { guard: "notAwakeUnasked", target: "waking" },
      ],
    },
    ready: {
      description: "The cluster runs and its endpoint is published.",
      tags: [REQUEUE.resync, phase("ready")],
      on: { observed: TAKE_OVER },
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
        ...SERVING_EXITS,
        // Not awake at the backend though asked to be (a sleep or wake the engine died in, a hand-made sleep):
        // waking, never Ready until it serves.
        { guard: "notAwakeUnasked", target: "waking" },
        // A version change asked meanwhile is made once it is awake again.
        { guard: "sleepAsked", target: "hibernating" },
        { guard: "upgradeWanted", target: "updating" },
      ],
    },
    hibernating: {
      description:
        "Asked to sleep (annotation engine.openmcp.cloud/hibernate): the backend stops the cluster, keeping its data, certificates and endpoint.",
      tags: [REQUEUE.poll, phase("progressing")],
      entry: [
        "hibernateCluster",
        recordEvent({ type: "Normal", reason: "Hibernating", message: "Putting the cluster to sleep" }),
      ],
      on: {
        // Still serving, or halted for its next step: order it again (it is idempotent).
        observed: [TAKE_OVER, { guard: "stillServing", target: "hibernating", reenter: true }],
      },
      always: [
        ...HIBERNATION_EXITS,
        { guard: "wakeAsked", target: "waking" },
        { guard: "backendHibernated", target: "hibernated" },
      ],
    },
    hibernated: {
      description:
        "Asleep as asked: nothing of it runs; it wakes at the same endpoint with the same certificate authority when asked.",
      tags: [REQUEUE.resync, phase("progressing")],
      entry: [recordEvent({ type: "Normal", reason: "Hibernated", message: "The cluster is asleep" })],
      on: { observed: TAKE_OVER },
      always: [
        ...HIBERNATION_EXITS,
        { guard: "wakeAsked", target: "waking" },
        // Woken by someone else: Ready (and, still asked to sleep, put to sleep again from there).
        { guard: "backendReady", target: "ready" },
        // Waking, though asked to sleep: never Hibernated on a cluster that starts. Through waking (its wake is a
        // no-op for a backend already waking), whose "sleep asked" puts it to sleep again at once.
        { guard: "wakingThoughAsleepAsked", target: "waking" },
        // Not asleep yet, though recorded so: never Hibernated on a cluster still stopping. Hibernating again, whose
        // hibernate is a no-op for a backend on its way and orders on a sleep halted half-way (else it stays halted).
        { guard: "goingToSleep", target: "hibernating" },
      ],
    },
    waking: {
      description: "Asked to wake: the backend starts the cluster on its data, at the same endpoint.",
      tags: [REQUEUE.poll, phase("progressing")],
      entry: [
        "wakeCluster",
        recordEvent({ type: "Normal", reason: "Waking", message: "Waking the cluster" }),
      ],
      on: {
        // Still asleep: the wake did not take; order it again (it is idempotent).
        observed: [TAKE_OVER, { guard: "asleepUnasked", target: "waking", reenter: true }],
      },
      always: [
        ...HIBERNATION_EXITS,
        { guard: "sleepAsked", target: "hibernating" },
        { guard: "backendReady", target: "ready" },
      ],
    },
    updating: {
      description: "The spec asks for another version; the backend is upgrading.",
      tags: [REQUEUE.poll, phase("progressing")],
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
        // Still idle on the old version, or still failed with what it no longer asks: the update did not take,
        // order it again.
        observed: [
          TAKE_OVER,
          { guard: "upgradeWanted", target: "updating", reenter: true },
          { guard: "failedOutOfDate", target: "updating", reenter: true },
        ],
      },
      // Failed with what it asks now ends the update; failed with what it no longer asks is what it repairs.
      always: [...UPDATING_EXITS, { guard: "backendReadyAsWanted", target: "ready" }],
    },
    failed: {
      ...failedState(
        "A person must act: unsupported version, downgrade, or a cluster the backend reports failed (one failed with what it no longer asks, e.g. a deleted settings Rollout's settings, is updated to what it asks now).",
        [phase("progressing")],
        [{ guard: "failedOutOfDate", target: "updating" }],
      ),
      on: { observed: TAKE_OVER },
    },
    deleting: deletingState(
      "Deletion requested: wait for others' finalizers, delete at the backend, then let go.",
      [phase("terminating")],
      {
        kind: "Cluster",
        releasing: "The backend deletes the cluster; we wait until it reports it gone.",
        entry: ["deleteCluster"],
      },
    ),
  },
});

/** The machine's type, for helpers that take it as a value. */
export type ClusterMachine = typeof clusterMachine;
