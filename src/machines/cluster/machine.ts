/** The Cluster statechart: Pending → Provisioning → Ready ⇄ Updating, Failed, Deleting. Pure: no I/O, no clock. */
import { setup } from "xstate";
import { CLUSTER_PHASES } from "../../api/constants.ts";
import {
  acceptedVersion as accepted,
  type BackendClusterFacts,
  backendClusterGuards,
  deletingState,
  failedState,
  incompleteness,
} from "../backend-cluster/backend-cluster.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { PHASE_TAG, REQUEUE } from "../shared/machine-tags.ts";
import type { ObservedEvent } from "../shared/observed-guard.ts";

/**
 * Everything one reconcile knows, computed level-based from the Cluster object, its profile and the
 * backend's observation (see `backend-cluster.ts`, shared with the EngineCluster). The machine never
 * sees a watch verb, only these facts.
 */
export type ClusterFacts = BackendClusterFacts;

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

/** The Cluster machine: named guards and actions first, then the chart, which refers to them by name. */
export const clusterMachine = setup({
  types: {
    context: {} as Record<string, never>,
    events: {} as ClusterEvent,
  },
  guards: backendClusterGuards<ClusterFacts>(),
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
      tags: [REQUEUE.retry, phase("progressing")],
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "versionRejected", target: "failed" },
        { guard: "specAcceptable", target: "provisioning" },
      ],
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
        observed: { guard: "backendNeedsCreate", target: "provisioning", reenter: true },
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
      tags: [REQUEUE.resync, phase("ready")],
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
        { guard: "backendNeedsCreate", target: "provisioning" },
        { guard: "backendFailed", target: "failed" },
        { guard: "upgradeWanted", target: "updating" },
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
        // Still idle on the old version: the update did not take, order it again.
        observed: { guard: "upgradeWanted", target: "updating", reenter: true },
      },
      always: [
        { guard: "isBeingDeleted", target: "deleting" },
        { guard: "versionRejected", target: "failed" },
        { guard: "backendNeedsCreate", target: "provisioning" },
        { guard: "backendFailed", target: "failed" },
        { guard: "backendReadyAsWanted", target: "ready" },
      ],
    },
    failed: failedState(
      "A person must act: unsupported version, downgrade, or a cluster the backend reports failed.",
      [phase("progressing")],
    ),
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
