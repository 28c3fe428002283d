/**
 * Invariants of the EngineCluster step over random worlds: CAPI owning, pausing and deleting, users
 * deleting published objects, a backend moving on, in any order. The contract's promises must hold.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../src/api/backend.ts";
import { CAPI_ANNOTATIONS } from "../../../src/api/cluster-api.ts";
import { ENGINE_CLUSTER_FINALIZERS } from "../../../src/api/constants/capi.ts";
import type { EngineCluster } from "../../../src/api/engine-cluster.ts";
import type { CapiOwnedCommand, CapiOwnedPublication } from "../../../src/machines/capi-owned/contract.ts";
import {
  engineClusterResponsibility,
  pausedBy,
  stepEngineCluster,
  stepPausedEngineCluster,
} from "../../../src/machines/engine-cluster/contract.ts";
import { aProfile } from "../../support/cluster-fixtures.ts";
import {
  anEngineCluster,
  CLAIMANT,
  capiOwner,
  engineInput,
  NOW,
} from "../../support/engine-cluster-fixtures.ts";
import { afterWrites, writesOf } from "../../support/step-writes.ts";

type WorldEvent =
  | { kind: "reconcile"; commandsFail: boolean }
  | { kind: "backendProgresses" }
  | { kind: "capiOwns" }
  | { kind: "pause"; on: boolean; how: "annotation" | "owner" }
  | { kind: "userDeletesPublication" }
  | { kind: "backendMoves" }
  | { kind: "capiDeletes" };

const worldEvent: fc.Arbitrary<WorldEvent> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("reconcile" as const), commandsFail: fc.boolean() }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: "backendProgresses" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "capiOwns" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("pause" as const),
      on: fc.boolean(),
      how: fc.constantFrom("annotation" as const, "owner" as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "userDeletesPublication" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "backendMoves" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "capiDeletes" as const }) },
);

interface World {
  cluster: EngineCluster | undefined;
  backend: ClusterObservation;
  publication: CapiOwnedPublication;
  ownerPaused: boolean;
  creates: number;
}

function progress(backend: ClusterObservation): ClusterObservation {
  if (!backend.exists) return backend;
  if (backend.phase === "deleting") return { exists: false };
  return { ...backend, phase: "ready", endpoint: backend.endpoint ?? "https://10.0.0.1:6443" };
}

function carryOut(world: World, commands: readonly CapiOwnedCommand[]): void {
  for (const command of commands) {
    if (command.kind === "create" && !world.backend.exists) {
      world.backend = { exists: true, phase: "provisioning", version: command.version };
      world.creates++;
    }
    if (command.kind === "delete" && world.backend.exists)
      world.backend = { ...world.backend, phase: "deleting" };
    if (command.kind === "publish") world.publication = { kubeconfig: "current", endpointCurrent: true };
    if (command.kind === "unpublish") world.publication = { kubeconfig: "missing", endpointCurrent: false };
  }
}

const withAnnotation = (cluster: EngineCluster, on: boolean): EngineCluster => {
  const annotations = { ...cluster.metadata.annotations };
  if (on) annotations[CAPI_ANNOTATIONS.paused] = "";
  else delete annotations[CAPI_ANNOTATIONS.paused];
  return { ...cluster, metadata: { ...cluster.metadata, annotations } };
};

/** How often each conditional invariant below was checked, so a test that never reaches one fails. */
const reached = {
  unownedOrPaused: 0,
  paused: 0,
  create: 0,
  endpointFixed: 0,
  finalizerRemoved: 0,
  provisioned: 0,
  endpointCompared: 0,
};

describe("EngineCluster invariants", () => {
  it("hold in every world", () => {
    fc.assert(
      fc.property(fc.array(worldEvent, { minLength: 1, maxLength: 40 }), (events) => {
        const world: World = {
          cluster: anEngineCluster({ owned: false }),
          backend: { exists: false },
          publication: { kubeconfig: "missing", endpointCurrent: false },
          ownerPaused: false,
          creates: 0,
        };
        let everProvisioned = false;
        let endpoint: unknown;
        const happen = (event: WorldEvent): void => {
          const cluster = world.cluster;
          if (!cluster) return;
          switch (event.kind) {
            case "backendProgresses":
              world.backend = progress(world.backend);
              break;
            case "capiOwns":
              world.cluster = {
                ...cluster,
                metadata: { ...cluster.metadata, ownerReferences: [capiOwner()] },
              };
              break;
            case "pause":
              if (event.how === "owner") world.ownerPaused = event.on;
              else world.cluster = withAnnotation(cluster, event.on);
              break;
            case "userDeletesPublication":
              world.publication = { kubeconfig: "missing", endpointCurrent: false };
              break;
            case "backendMoves":
              if (world.backend.exists)
                world.backend = { ...world.backend, endpoint: "https://10.9.9.9:1234" };
              break;
            case "capiDeletes":
              world.cluster = { ...cluster, metadata: { ...cluster.metadata, deletionTimestamp: NOW } };
              break;
            case "reconcile": {
              const paused =
                world.ownerPaused || cluster.metadata.annotations?.[CAPI_ANNOTATIONS.paused] !== undefined;
              const owned = (cluster.metadata.ownerReferences?.length ?? 0) > 0;
              // As the kind's `open` decides, once: a paused one gets the paused step, else the machine's.
              const responsibility = engineClusterResponsibility(
                cluster,
                aProfile(),
                CLAIMANT,
                world.ownerPaused,
              );
              expect(responsibility).toBe(paused ? "paused" : "ours");
              const result =
                responsibility === "paused"
                  ? stepPausedEngineCluster({
                      cluster,
                      why: pausedBy(cluster, world.ownerPaused) ?? "",
                      now: NOW,
                    })
                  : stepEngineCluster(
                      engineInput(cluster, owned ? world.backend : { exists: false }, world.publication),
                    );
              const writes = writesOf(cluster, result);
              if (paused || !owned) {
                // Before an owner and while paused, nothing is built and nothing but status is written.
                reached.unownedOrPaused++;
                expect(result.commands.filter((c) => c.kind === "create")).toEqual([]);
              }
              if (paused) {
                reached.paused++;
                expect(result.commands).toEqual([]);
                expect([...writes.metadataPatch, ...writes.specPatch]).toEqual([]);
              }
              if (result.commands.some((c) => c.kind === "create")) {
                reached.create++;
                expect(result.desired.metadata.finalizers).toContain(ENGINE_CLUSTER_FINALIZERS.engineCluster);
              }
              // The endpoint is written once and never changed.
              if (cluster.spec.controlPlaneEndpoint) {
                reached.endpointFixed++;
                expect(writes.specPatch).toEqual([]);
              }
              // Our finalizer goes only when the backend holds nothing.
              const had =
                cluster.metadata.finalizers?.includes(ENGINE_CLUSTER_FINALIZERS.engineCluster) ?? false;
              const keeps =
                result.desired.metadata.finalizers?.includes(ENGINE_CLUSTER_FINALIZERS.engineCluster) ??
                false;
              if (had && !keeps) {
                reached.finalizerRemoved++;
                expect(world.backend.exists).toBe(false);
              }

              let next = afterWrites(cluster, result);
              if (!event.commandsFail) carryOut(world, result.commands);
              if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length)
                next = undefined as never;
              world.cluster = next;
              if (next) {
                const provisioned = next.status?.initialization?.provisioned === true;
                // Provisioned only with an endpoint in the spec, and never taken back.
                if (provisioned) {
                  reached.provisioned++;
                  expect(next.spec.controlPlaneEndpoint).toBeDefined();
                }
                if (everProvisioned) expect(provisioned).toBe(true);
                everProvisioned ||= provisioned;
                if (endpoint !== undefined) {
                  reached.endpointCompared++;
                  expect(next.spec.controlPlaneEndpoint).toEqual(endpoint);
                }
                endpoint ??= next.spec.controlPlaneEndpoint;
              }
              break;
            }
          }
        };
        for (const event of events) happen(event);
        // Finally CAPI unpauses, owns and deletes it, and the backend works: it goes, and so does the cluster.
        for (const how of ["owner", "annotation"] as const) happen({ kind: "pause", on: false, how });
        happen({ kind: "capiOwns" });
        happen({ kind: "capiDeletes" });
        for (let i = 0; i < 10 && world.cluster; i++) {
          happen({ kind: "reconcile", commandsFail: false });
          happen({ kind: "backendProgresses" });
        }
        expect(world.cluster).toBeUndefined();
        expect(world.backend.exists).toBe(false);
        // One Cluster object, one cluster at the backend, however often it was reconciled.
        expect(world.creates).toBeLessThanOrEqual(1);
      }),
      { numRuns: 1500 },
    );
    // Every conditional invariant above was checked, in many worlds.
    for (const [branch, count] of Object.entries(reached)) expect(count, branch).toBeGreaterThan(10);
  });
});
