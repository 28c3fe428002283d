/**
 * The EngineCluster statechart (a Cluster API infrastructure cluster): the family's Pending → Provisioning →
 * Provisioned, Failed, Deleting (`capi-owned/machine.ts`), with what is the InfraCluster's own: its words,
 * its phases and its one serving state. Externally managed objects and pausing are decided before the
 * machine (see `contract.ts`).
 */

import { backendClusterPredicates as is } from "../backend-cluster/backend-cluster.ts";
import type { CapiOwnedFacts } from "../capi-owned/machine.ts";
import { capiOwnedMachine, leaveServing, readyEvent } from "../capi-owned/machine.ts";
import { REQUEUE } from "../shared/machine-tags.ts";
import { whenObserved } from "../shared/observed-guard.ts";

/** The phases an EngineCluster shows (`status.phase`), after CAPI's own words. */
export const ENGINE_CLUSTER_PHASES = {
  pending: "Pending",
  provisioning: "Provisioning",
  provisioned: "Provisioned",
  failed: "Failed",
  deleting: "Deleting",
} as const;

/** Everything one reconcile knows: the family's facts (an EngineCluster has none of its own). */
export type EngineClusterFacts = CapiOwnedFacts;

/** The EngineCluster machine: the family's chart with the InfraCluster's serving state. */
export const engineClusterMachine = capiOwnedMachine<
  EngineClusterFacts,
  keyof typeof ENGINE_CLUSTER_PHASES,
  "publicationStale"
>({
  id: "engineCluster",
  kind: "EngineCluster",
  noun: "cluster",
  phases: ENGINE_CLUSTER_PHASES,
  descriptions: {
    pending:
      "Waiting for a Cluster API Cluster to own it, for its profile, or for an acceptable version; nothing is built.",
    failed: "A person must act: unsupported version, or a cluster the backend reports failed.",
    deleting: "Deletion requested (by CAPI, through the Cluster): delete at the backend, then let go.",
  },
  // Owned and its profile found is all an infrastructure cluster waits for.
  ownerReady: () => true,
  guards: {
    /** Ready at the backend, but the kubeconfig Secret or the ClusterEndpoint is missing or stale. */
    publicationStale: whenObserved<EngineClusterFacts>((facts) => is.backendReady(facts) && !facts.published),
  },
  servingState: "provisioned",
  serving: (phase) => ({
    description:
      "The cluster runs: spec.controlPlaneEndpoint set once, kubeconfig Secret and ClusterEndpoint published, provisioned reported.",
    tags: [REQUEUE.resync, phase("provisioned")],
    entry: ["publish", { type: "recordEvent", params: readyEvent("Provisioned", "The cluster") }],
    on: {
      // Someone deleted the Secret or the ClusterEndpoint: publish again.
      observed: { guard: "publicationStale", target: "provisioned", reenter: true },
    },
    always: leaveServing(),
  }),
});
