/**
 * The EngineControlPlane statechart (a Cluster API managed control plane): the family's Pending →
 * Provisioning → …, Failed, Deleting (`capi-owned/machine.ts`), with what is the ControlPlane's own: its
 * words, its phases, its infrastructure fact and its serving state Running (Ready ⇄ Updating, Refused).
 * Pausing is decided before the machine (see `contract.ts`): a paused machine does not move.
 */
import {
  acceptedVersion,
  failureEvent,
  backendClusterPredicates as is,
} from "../backend-cluster/backend-cluster.ts";
import { type CapiOwnedFacts, capiOwnedMachine, leaveServing, readyEvent } from "../capi-owned/machine.ts";
import { REQUEUE } from "../shared/machine-tags.ts";
import { whenObserved } from "../shared/observed-guard.ts";

/** The phases an EngineControlPlane shows (`status.phase`). */
export const ENGINE_CONTROL_PLANE_PHASES = {
  pending: "Pending",
  provisioning: "Provisioning",
  ready: "Ready",
  updating: "Updating",
  failed: "Failed",
  deleting: "Deleting",
} as const;

/** Everything one reconcile knows: the family's facts and the control plane's own. */
export interface EngineControlPlaneFacts extends CapiOwnedFacts {
  /**
   * The owning Cluster reports its infrastructure provisioned (at once when it has no infrastructureRef):
   * a control plane provider waits for it before building (Cluster API's managed-endpoint proposal).
   */
  readonly infrastructureReady: boolean;
}

const when = whenObserved<EngineControlPlaneFacts>;

const publicationStale = (facts: EngineControlPlaneFacts) => facts.backend.exists && !facts.published;

/** Leaving the running control plane, checked first in each of its states (before their own moves). */
const leaveRunning = leaveServing("#engineControlPlane.");

/** The EngineControlPlane machine: the family's chart with the ControlPlane's running states. */
export const engineControlPlaneMachine = capiOwnedMachine<
  EngineControlPlaneFacts,
  keyof typeof ENGINE_CONTROL_PLANE_PHASES,
  | "upgradeWanted"
  | "upgradeWantedPublicationStale"
  | "backendReadyAsWanted"
  | "versionRefused"
  | "versionAccepted"
  | "publicationStale"
>({
  id: "engineControlPlane",
  kind: "EngineControlPlane",
  noun: "control plane",
  phases: ENGINE_CONTROL_PLANE_PHASES,
  descriptions: {
    pending:
      "Waiting for a Cluster API Cluster to own it and report its infrastructure, for its profile, or for an acceptable version; nothing is built.",
    failed:
      "A person must act: a version refused before anything was built, or a control plane the backend reports failed.",
    deleting: "Deletion requested (by Cluster API, through the Cluster): delete at the backend, then let go.",
  },
  // Owner and infrastructure arrive as changes of watched objects; only a missing profile needs the retry.
  ownerReady: (facts) => facts.infrastructureReady,
  guards: {
    upgradeWanted: when(is.upgradeWanted),
    backendReadyAsWanted: when(is.backendReadyAsWanted),
    /** spec.version asks for a downgrade, or for a version the profile does not offer (the cluster keeps running). */
    versionRefused: when((facts) => facts.profileFound && facts.version?.kind !== "accepted"),
    /** spec.version resolves again (fixed, or offered now). */
    versionAccepted: when((facts) => facts.version?.kind === "accepted"),
    /** Running, but the kubeconfig Secret or the ClusterEndpoint is missing or behind the backend. */
    publicationStale: when(publicationStale),
    /** Both: an update to order again, and a publication to refresh. */
    upgradeWantedPublicationStale: when((facts) => is.upgradeWanted(facts) && publicationStale(facts)),
  },
  servingState: "running",
  serving: (phase) => ({
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
        description: "spec.version asks for a newer version; the backend upgrades the running control plane.",
        tags: [REQUEUE.poll, phase("updating")],
        entry: [
          {
            type: "updateCluster",
            params: ({ event }: { event: { facts: EngineControlPlaneFacts } }) => ({
              version: acceptedVersion(event.facts),
            }),
          },
          {
            type: "recordEvent",
            params: ({ event }: { event: { facts: EngineControlPlaneFacts } }) => ({
              type: "Normal",
              reason: "Updating",
              message: `Upgrading the control plane to Kubernetes ${acceptedVersion(event.facts) ?? "(unknown)"}`,
            }),
          },
        ],
        on: {
          // Still idle on the old version: the update did not take, order it again. This takes the event
          // from running's own `observed`, so a kubeconfig gone stale meanwhile is published here too.
          observed: [
            {
              guard: "upgradeWantedPublicationStale",
              target: "updating",
              reenter: true,
              actions: "publish",
            },
            { guard: "upgradeWanted", target: "updating", reenter: true },
          ],
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
        entry: [
          {
            type: "recordEvent",
            params: ({ event }: { event: { facts: EngineControlPlaneFacts } }) => failureEvent(event.facts),
          },
        ],
        always: [...leaveRunning, { guard: "versionAccepted", target: "ready" }],
      },
    },
  }),
});
