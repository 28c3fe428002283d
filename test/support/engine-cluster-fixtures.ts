/** Fixtures for pure EngineCluster step tests: stored EngineClusters, observations, step input. */
import { expect } from "vitest";
import type { ClusterObservation } from "../../src/api/backend.ts";
import type { Condition, ObjectMeta } from "../../src/api/common.ts";
import type { EngineCluster } from "../../src/api/engine-cluster.ts";
import type { CapiOwnedPublication } from "../../src/machines/capi-owned/contract.ts";
import type { EngineClusterStepInput } from "../../src/machines/engine-cluster/contract.ts";
import * as builders from "./builders.ts";
import { aProfile, NOW, PROVIDER, TIMING } from "./cluster-fixtures.ts";
import { conditionOf } from "./conditions.ts";

export { capiOwner } from "./builders.ts";
export { CLAIMANT, NOW, PROVIDER, TIMING } from "./cluster-fixtures.ts";

/** An EngineCluster of {@link builders.anEngineCluster} as the API server holds it; owned by CAPI Cluster `workload` unless `owned` is false. */
export function anEngineCluster(
  props: Pick<builders.EngineClusterProps, "annotations" | "finalizers" | "version"> & {
    owned?: boolean;
  } = {},
): EngineCluster {
  const { owned, ...rest } = props;
  return builders.stored(
    builders.anEngineCluster({ ...rest, ...(owned === false ? {} : { owner: "workload" }) }),
    {
      uid: "e0000000-0000-4000-8000-000000000001",
    },
  );
}

/** Nothing published yet (the backend gives admin access). */
export const unpublished: CapiOwnedPublication = { kubeconfig: "missing", endpointCurrent: false };
export const published: CapiOwnedPublication = { kubeconfig: "current", endpointCurrent: true };

export const readyBackend = (
  endpoint = "https://127.0.0.1:6443",
): Extract<ClusterObservation, { exists: true }> => ({
  exists: true,
  phase: "ready",
  version: "1.33.3",
  endpoint,
});

/** Step input with defaults: our profile (the step is only given EngineClusters that are ours and not paused). */
export function engineInput(
  cluster: EngineCluster,
  backend: ClusterObservation,
  publication: CapiOwnedPublication = unpublished,
  extra: Partial<EngineClusterStepInput> = {},
): EngineClusterStepInput {
  return {
    cluster,
    profile: aProfile(),
    providerName: PROVIDER,
    observation: { backend, publication },
    now: NOW,
    timing: TIMING,
    ...extra,
  };
}

/** A CAPI-owned kind's step result, as far as {@link expectWaitingForOwner} reads it. */
interface OwnedStep {
  readonly state: string;
  readonly commands: readonly unknown[];
  readonly desired: {
    readonly metadata: ObjectMeta;
    readonly status?: { readonly conditions?: readonly Condition[] };
  };
}

/**
 * Checks a step of an EngineCluster or EngineControlPlane no CAPI Cluster owns yet: it stays pending, with no
 * finalizer and no command, its `type` condition (Ready, Available) False with reason WaitingForClusterOwner;
 * returns that condition for the caller's own checks of its message.
 */
export function expectWaitingForOwner(result: OwnedStep, type: string): Condition | undefined {
  expect(result.state).toBe("pending");
  expect(result.commands).toEqual([]);
  expect(result.desired.metadata.finalizers).toBeUndefined();
  const condition = conditionOf(result.desired, type);
  expect(condition).toMatchObject({ status: "False", reason: "WaitingForClusterOwner" });
  return condition;
}
