/**
 * The EngineCluster statechart (a Cluster API infrastructure cluster): Pending → Provisioning →
 * Provisioned, Failed, Deleting. Pure: no I/O, no clock. Pausing and externally managed objects are
 * decided before the machine (see `step.ts`): a paused machine does not move.
 */
import { setup } from "xstate";
import {
  backendClusterGuards,
  deletingState,
  failedState,
  backendClusterPredicates as is,
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

/** The phases an EngineCluster shows (`status.phase`), after CAPI's own words. */
export const ENGINE_CLUSTER_PHASES = {
  pending: "Pending",
  provisioning: "Provisioning",
  provisioned: "Provisioned",
  failed: "Failed",
  deleting: "Deleting",
  paused: "Paused",
} as const;

/**
 * Everything one reconcile knows, level-based, from the object, its owner, its profile and the backend:
 * the facts every backend-held cluster has (`backend-cluster.ts`, shared with the Cluster) and its own.
 */
export interface EngineClusterFacts extends CapiOwnedFacts {
  /** The kubeconfig Secret (when the backend gives admin access) and the ClusterEndpoint are in place. */
  readonly published: boolean;
}

/** The one event: "here is what the world looks like now". */
export type EngineClusterEvent = ObservedEvent<EngineClusterFacts>;

const when = whenObserved<EngineClusterFacts>;
const phase = (name: keyof typeof ENGINE_CLUSTER_PHASES) => `${PHASE_TAG}${ENGINE_CLUSTER_PHASES[name]}`;
const shared = backendClusterGuards<EngineClusterFacts>();

/** The EngineCluster machine: named guards and actions first, then the chart, which refers to them by name. */
export const engineClusterMachine = setup({
  types: {
    context: {} as Record<string, never>,
    events: {} as EngineClusterEvent,
  },
  guards: {
    isBeingDeleted: shared.isBeingDeleted,
    /** Owned by a CAPI Cluster (nothing is decided before), with a version its profile refuses. */
    versionRejected: when((facts) => facts.owner !== undefined && is.versionRejected(facts)),
    /** Owned by a CAPI Cluster, the profile exists and the version resolves: the cluster can be ordered. */
    readyToProvision: when((facts) => facts.owner !== undefined && is.specAcceptable(facts)),
    backendAbsent: shared.backendAbsent,
    backendReady: shared.backendReady,
    backendFailed: shared.backendFailed,
    /** Ready at the backend, but the kubeconfig Secret or the ClusterEndpoint is missing or stale. */
    publicationStale: when((facts) => is.backendReady(facts) && !facts.published),
    problemResolved: shared.problemResolved,
    withoutOurFinalizer: shared.withoutOurFinalizer,
    noForeignFinalizers: shared.noForeignFinalizers,
    backendNotDeleting: shared.backendNotDeleting,
  },
  actions: capiOwnedActions,
}).createMachine({
  id: "engineCluster",
  context: {},
  initial: "pending",
  states: {
    pending: pendingState(
      "Waiting for a Cluster API Cluster to own it, for its profile, or for an acceptable version; nothing is built.",
      // The owner reference arrives as a change of the object; only a missing profile needs the retry.
      [REQUEUE.retry, phase("pending")],
    ),
    provisioning: provisioningState(
      "Finalizer set, cluster ordered at the backend; waiting for it to report ready with an endpoint.",
      [REQUEUE.poll, phase("provisioning")],
      "the cluster",
      "provisioned",
    ),
    provisioned: {
      description:
        "The cluster runs: spec.controlPlaneEndpoint set once, kubeconfig Secret and ClusterEndpoint published, provisioned reported.",
      tags: [REQUEUE.resync, phase("provisioned")],
      entry: ["publish", { type: "recordEvent", params: readyEvent("Provisioned", "The cluster") }],
      on: {
        // Someone deleted the Secret or the ClusterEndpoint: publish again.
        observed: { guard: "publicationStale", target: "provisioned", reenter: true },
      },
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "backendAbsent", target: "provisioning" },
        { guard: "backendFailed", target: "failed" },
      ],
    },
    failed: failedState("A person must act: unsupported version, or a cluster the backend reports failed.", [
      phase("failed"),
    ]),
    deleting: deletingState(
      "Deletion requested (by CAPI, through the Cluster): delete at the backend, then let go.",
      [phase("deleting")],
      {
        kind: "EngineCluster",
        releasing:
          "The backend deletes the cluster, the kubeconfig Secret and ClusterEndpoint go; we wait until it is gone.",
        entry: ["unpublish", "deleteCluster"],
      },
    ),
  },
});
