/**
 * The EngineCluster's contract with Cluster API (the v1beta2 InfraCluster contract): what makes it one of the
 * CAPI-owned family and what is its own — its object's shape, `cluster.x-k8s.io/managed-by`, its Ready
 * condition and status fields, its words. The step, status and explanation are the family's recipes
 * (`capi-owned/`), made here from this contract.
 */
import { CAPI_CONDITIONS, owningCapiCluster } from "../../api/cluster-api.ts";
import { ENGINE_CLUSTER_FINALIZERS } from "../../api/constants/capi.ts";
import { REASONS } from "../../api/constants.ts";
import type { EngineCluster, EngineClusterStatus } from "../../api/engine-cluster.ts";
import type { CapiOwnedStepInput, CapiOwnedStepResult } from "../capi-owned/contract.ts";
import { capiOwnedGuardPhrases, explainCapiOwned } from "../capi-owned/explain.ts";
import { capiOwnedSteps } from "../capi-owned/step.ts";
import type { Explanation } from "../shared/explanation.ts";
import type { RequeueTiming } from "../shared/machine-tags.ts";
import { type EngineClusterFacts, engineClusterMachine } from "./machine.ts";

/** Everything one step of an EngineCluster that is ours (and not paused) needs; all of it data. */
export interface EngineClusterStepInput extends CapiOwnedStepInput<"cluster", EngineCluster> {
  readonly timing: RequeueTiming;
}

/** The desired EngineCluster: metadata, the spec field the machine owns, status. */
export type EngineClusterStepResult = CapiOwnedStepResult<EngineCluster, EngineClusterStatus>;

const steps = capiOwnedSteps<{
  key: "cluster";
  object: EngineCluster;
  status: EngineClusterStatus;
  facts: EngineClusterFacts;
  input: EngineClusterStepInput;
  owner: boolean;
}>({
  key: "cluster",
  machine: engineClusterMachine,
  servingState: "provisioned",
  finalizer: ENGINE_CLUSTER_FINALIZERS.engineCluster,
  honoursManagedBy: true,
  // Absent or empty: the ProviderConfig's defaultVersion, else the profile's newest.
  requestedVersion: (cluster) => cluster.spec.kubernetes?.version,
  ownFacts: () => ({}),
  // The runtime tells it only whether the owner (named by its ownerReference) is paused.
  ownerPause: (cluster, ownerPaused) => ({ paused: ownerPaused, name: owningCapiCluster(cluster.metadata) }),
  status: {
    kind: "EngineCluster",
    what: "the cluster",
    condition: CAPI_CONDITIONS.ready,
    servingReason: REASONS.Ready,
    ref: "infrastructureRef",
    initialized: "provisioned",
    // v1beta1 spelled the same signal `ready`, still read by older CAPI releases.
    signals: (provisioned) => ({ ready: provisioned }),
    backendFields: (_, backend) =>
      backend.exists
        ? {
            version: backend.version,
            ...(backend.failureDomains && backend.failureDomains.length > 0
              ? { failureDomains: backend.failureDomains }
              : {}),
          }
        : {},
  },
});

/** Whether this engine acts on an EngineCluster (given whether its CAPI Cluster is paused), decided first. */
export const engineClusterResponsibility = steps.responsibility;
/** Why a paused EngineCluster is paused (given whether its CAPI Cluster is), or undefined when it is not. */
export const pausedBy = steps.pausedBy;
/** The backend's key for an EngineCluster: its own UID, so it never meets an openMCP Cluster's cluster. */
export const engineClusterTarget = steps.target;
/** The facts of the world, level-based. */
export const engineClusterFacts = steps.facts;
/**
 * One step of an EngineCluster that is ours and not paused: the family's step; `provisioned` (and the
 * endpoint in the spec) once it is provisioned with an endpoint.
 */
export const stepEngineCluster: (input: EngineClusterStepInput) => EngineClusterStepResult = steps.step;
/** The step of a paused EngineCluster (it or its CAPI Cluster): only the Paused condition says so and why. */
export const stepPausedEngineCluster = steps.pausedStep;
/** The status of an EngineCluster while the backend cannot be looked at: its main condition says why; nothing moves. */
export const unobservedEngineClusterStatus = steps.unobservedStatus;

/** Every guard of the EngineCluster machine, as a person would say it. */
export const ENGINE_CLUSTER_GUARD_PHRASES = capiOwnedGuardPhrases("EngineCluster", "cluster", {
  versionRejected: "the requested version is refused (not offered, or a downgrade)",
  readyToProvision: "a CAPI Cluster owns it, its profile exists and offers the version",
  publicationStale: "the kubeconfig Secret or the ClusterEndpoint is missing",
});

/** Explains `cluster` from what it stores: annotations, owner, state and its Ready and Paused conditions. */
export function explainEngineCluster(cluster: EngineCluster, ownerPaused?: boolean): Explanation {
  return explainCapiOwned(cluster, ownerPaused, {
    kind: "EngineCluster",
    what: "the cluster",
    honoursManagedBy: true,
    conditions: [CAPI_CONDITIONS.ready],
    waitingFor: (state, owner) => {
      switch (state.split(".")[0]) {
        case "pending":
          return owner === undefined
            ? "a Cluster API Cluster that names it in spec.infrastructureRef (CAPI then sets the ownerReference)"
            : `its ClusterProfile "${cluster.spec.profile}" and an offered version`;
        case "provisioned":
          return `nothing: provisioned for Cluster ${owner ?? "(none)"}; CAPI moves its Cluster to Provisioned. It moves when the Cluster is deleted or the backend loses or fails it`;
        case "failed":
          return "a person: an offered spec.kubernetes.version, a fix at the backend, or deleting the Cluster";
        default:
          return undefined;
      }
    },
  });
}
