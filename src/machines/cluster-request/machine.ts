/** The ClusterRequest statechart: Pending → Scheduling → Granted, Denied, Misconfigured, Replacing, Deleting. Pure: no I/O, no clock. */
import { setup } from "xstate";
import { REQUEST_PHASES } from "../../api/constants.ts";
import { actionsAsData, recordEvent } from "../shared/actions-as-data.ts";
import { PHASE_TAG, REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, observedMachineTypes, whenObserved } from "../shared/observed-guard.ts";
import type { Decision } from "./schedule.ts";

/** What one reconcile knows about a ClusterRequest and the Clusters around it, level-based. */
export interface ClusterRequestFacts {
  /** `metadata.deletionTimestamp` is set. */
  readonly deleting: boolean;
  /** The scheduler's decision's kind (see `schedule.ts`). */
  readonly decision: Decision["kind"];
  /** The decision is a placement that is fully in place: finalizer, claim, grant and metadata. */
  readonly held: boolean;
  /** No Cluster carries this request's finalizer or prefix claim, and its grant is gone. */
  readonly holdsNothing: boolean;
  /** `waitForClusterDeletion` is off, or the request's Cluster is gone, or it stays (others still use it). */
  readonly clusterDeletionDone: boolean;
}

/** The one event: "here is what the world looks like now". */
export type ClusterRequestEvent = ObservedEvent<ClusterRequestFacts>;

const when = whenObserved<ClusterRequestFacts>;

/** Deletion comes first, from every state that is not deleting already. */
const whenDeleted = { guard: "isBeingDeleted", target: "deleting" } as const;
/** Where the decision sends a request that is not placed yet: the same from pending and from scheduling. */
const followDecision = [
  whenDeleted,
  { guard: "isMisconfigured", target: "misconfigured" },
  { guard: "isDenied", target: "denied" },
  { guard: "mustLetGo", target: "replacing" },
  { guard: "isHeld", target: "granted" },
] as const;
const pending = `${PHASE_TAG}${REQUEST_PHASES.pending}`;

/** The ClusterRequest machine: named guards and actions first, then the chart, which refers to them by name. */
export const clusterRequestMachine = setup({
  types: observedMachineTypes<ClusterRequestFacts>(),
  guards: {
    isBeingDeleted: when((facts) => facts.deleting),
    isMisconfigured: when((facts) => facts.decision === "misconfigured"),
    isDenied: when((facts) => facts.decision === "deny"),
    mustLetGo: when((facts) => facts.decision === "replace"),
    canPlace: when((facts) => facts.decision === "place"),
    isHeld: when((facts) => facts.decision === "place" && facts.held),
    notHeld: when((facts) => facts.decision !== "place" || !facts.held),
    placementIncomplete: when((facts) => facts.decision === "place" && !facts.held),
    configurationServes: when((facts) => facts.decision !== "misconfigured"),
    notDenied: when((facts) => facts.decision !== "deny"),
    stillLettingGo: when((facts) => facts.decision === "replace"),
    notLettingGo: when((facts) => facts.decision !== "replace"),
    releasedAndDone: when((facts) => facts.holdsNothing && facts.clusterDeletionDone),
    releasedWaiting: when((facts) => facts.holdsNothing && !facts.clusterDeletionDone),
    clusterDeletionDone: when((facts) => facts.clusterDeletionDone),
  },
  actions: actionsAsData("assign", "letGo", "release"),
}).createMachine({
  id: "clusterRequest",
  context: {},
  initial: "pending",
  states: {
    pending: {
      description:
        "Deciding where the request is served; stays here while a Cluster of its name is still being deleted.",
      tags: [REQUEUE.poll, pending],
      always: [...followDecision, { guard: "canPlace", target: "scheduling" }],
    },
    scheduling: {
      description:
        "Finalizer set; the Cluster created or claimed (its finalizer for this request, a prefix on a shared one), the grant written.",
      tags: [REQUEUE.poll, pending],
      entry: ["addFinalizer", "assign"],
      on: {
        // Not in place on a later look (a write failed, someone undid it): assign again; every step is idempotent.
        observed: { guard: "placementIncomplete", target: "scheduling", reenter: true },
      },
      always: [...followDecision],
    },
    granted: {
      description: "The request has its Cluster; the grant records it and the prefix.",
      tags: [REQUEUE.resync, `${PHASE_TAG}${REQUEST_PHASES.granted}`],
      entry: [recordEvent({ type: "Normal", reason: "Granted", message: "Cluster granted" })],
      always: [whenDeleted, { guard: "notHeld", target: "pending" }],
    },
    replacing: {
      description:
        "Someone deletes the request's Cluster: let go of it, so it can go and be made again under its name.",
      tags: [REQUEUE.poll, pending],
      entry: ["addFinalizer", "letGo"],
      on: {
        observed: { guard: "stillLettingGo", target: "replacing", reenter: true },
      },
      always: [whenDeleted, { guard: "notLettingGo", target: "pending" }],
    },
    misconfigured: {
      description:
        "The scheduler configuration cannot serve the request (e.g. no mapping for its purpose); retried when it changes.",
      tags: [pending],
      entry: [recordEvent({ type: "Warning", reason: "ConfigurationProblem", message: "" })],
      always: [whenDeleted, { guard: "configurationServes", target: "pending" }],
    },
    denied: {
      description:
        "The request cannot be served as asked (a name clash, a trait no profile offers, bad annotations).",
      // Clusters, profiles and Purposes wake requests; the retry is a safety net.
      tags: [REQUEUE.retry, `${PHASE_TAG}${REQUEST_PHASES.denied}`],
      entry: [recordEvent({ type: "Warning", reason: "Denied", message: "" })],
      always: [whenDeleted, { guard: "notDenied", target: "pending" }],
    },
    deleting: {
      description:
        "Deletion requested: let go of the Cluster (deleting it if nobody else needs it), remove the grant, then go.",
      initial: "checking",
      states: {
        checking: {
          description: "Does the request still hold anything?",
          always: [
            { guard: "releasedAndDone", target: "released" },
            { guard: "releasedWaiting", target: "waitingForCluster" },
            { target: "releasing" },
          ],
        },
        releasing: {
          description:
            "Removing the request's finalizer and prefix claim from its Cluster (deleting the Cluster when it is marked delete-without-requests and no request is left) and its grant.",
          tags: [REQUEUE.poll],
          entry: ["release"],
          on: {
            // Only a look after the release was ordered may move on.
            observed: [
              { guard: "releasedAndDone", target: "released" },
              { guard: "releasedWaiting", target: "waitingForCluster" },
              { target: "releasing", reenter: true },
            ],
          },
        },
        waitingForCluster: {
          description: "waitForClusterDeletion: the request stays until its Cluster is gone.",
          tags: [REQUEUE.poll],
          always: [{ guard: "clusterDeletionDone", target: "released" }],
        },
        released: {
          description: "Nothing is held any more; the request's finalizer goes.",
          type: "final",
          entry: ["removeFinalizer"],
        },
      },
    },
  },
});

/** The machine's type, for helpers that take it as a value. */
export type ClusterRequestMachine = typeof clusterRequestMachine;
