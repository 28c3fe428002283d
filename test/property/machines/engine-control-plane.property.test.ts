/**
 * Invariants of the EngineControlPlane step over random worlds: users raising, lowering and mistyping
 * spec.version, the backend upgrading slowly, credentials rotating, published objects deleted, in any order.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../src/api/backend.ts";
import type { EngineControlPlane } from "../../../src/api/engine-control-plane.ts";
import { compareVersions } from "../../../src/machines/backend-cluster/kubernetes-version.ts";
import type { CapiOwnedCommand, CapiOwnedPublication } from "../../../src/machines/capi-owned/contract.ts";
import { stepEngineControlPlane } from "../../../src/machines/engine-control-plane/contract.ts";
import { applied as withOperations } from "../../../src/machines/shared/json-patch.ts";
import { changesTo } from "../../../src/runtime/api-server/patch-object.ts";
import { anEngineControlPlane, stored } from "../../support/builders.ts";
import { aProfile, NOW, PROVIDER, TIMING } from "../../support/cluster-fixtures.ts";

const base = aProfile();
/** Our profile, offering 1.34.1 besides 1.33.3, 1.33.2 (deprecated) and 1.32.7. */
const profile = {
  ...base,
  spec: { ...base.spec, supportedVersions: [{ version: "1.34.1" }, ...base.spec.supportedVersions] },
};

type WorldEvent =
  | { kind: "reconcile" }
  | { kind: "backendProgresses" }
  | { kind: "userSetsVersion"; version: string }
  | { kind: "credentialsRotate" }
  | { kind: "userDeletesPublication" };

const worldEvent: fc.Arbitrary<WorldEvent> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: "reconcile" as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: "backendProgresses" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("userSetsVersion" as const),
      version: fc.constantFrom("1.32", "v1.32.7", "1.33", "1.33.3", "v1.34.1", "1.34", "1.20", "1.35.0"),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "credentialsRotate" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "userDeletesPublication" as const }) },
);

interface World {
  controlPlane: EngineControlPlane;
  backend: ClusterObservation;
  publication: CapiOwnedPublication;
  /** The version the backend is upgrading to, while it is. */
  upgradingTo: string | undefined;
}

const aControlPlane = (version: string): EngineControlPlane =>
  stored(anEngineControlPlane({ profile: profile.metadata.name ?? "", version, owner: "workload" }), {
    uid: "ec000000-0000-4000-8000-000000000002",
    resourceVersion: undefined,
  });

function carryOut(world: World, commands: readonly CapiOwnedCommand[]): void {
  for (const command of commands) {
    if (command.kind === "create" && !world.backend.exists) {
      world.backend = { exists: true, phase: "provisioning", version: command.version };
    } else if (command.kind === "update" && world.backend.exists) {
      world.backend = { ...world.backend, phase: "updating" };
      world.upgradingTo = command.version;
    } else if (command.kind === "publish") {
      world.publication = { kubeconfig: "current", endpointCurrent: true };
    }
  }
}

function progress(world: World): void {
  const backend = world.backend;
  if (!backend.exists) return;
  world.backend = {
    ...backend,
    phase: "ready",
    version: world.upgradingTo ?? backend.version,
    endpoint: "https://10.0.0.1:6443",
  };
  world.upgradingTo = undefined;
}

describe("the EngineControlPlane step over random worlds", () => {
  it("never orders a downgrade, never takes back initialized, never changes the endpoint, stays Available while running", () => {
    const reached = { refused: 0, updating: 0, initialized: 0, rotated: 0 };
    fc.assert(
      fc.property(
        fc.constantFrom("1.33", "1.33.3", "v1.32.7"),
        // Histories of any length up to 40 (fast-check's default size keeps arrays near 10 events, too short
        // to rotate credentials in the middle of an upgrade).
        fc.array(worldEvent, { maxLength: 40, size: "max" }),
        (first, events) => {
          const world: World = {
            controlPlane: aControlPlane(first),
            backend: { exists: false },
            publication: { kubeconfig: "missing", endpointCurrent: false },
            upgradingTo: undefined,
          };
          let initialized = false;
          let endpoint: unknown;
          for (const event of events) {
            if (event.kind === "backendProgresses") progress(world);
            else if (event.kind === "credentialsRotate" && world.publication.kubeconfig === "current") {
              world.publication = { ...world.publication, kubeconfig: "stale" };
            } else if (event.kind === "userDeletesPublication") {
              world.publication = { kubeconfig: "missing", endpointCurrent: false };
            } else if (event.kind === "userSetsVersion") {
              const { controlPlane } = world;
              world.controlPlane = {
                ...controlPlane,
                metadata: {
                  ...controlPlane.metadata,
                  generation: (controlPlane.metadata.generation ?? 1) + 1,
                },
                spec: { ...controlPlane.spec, version: event.version },
              };
            } else if (event.kind === "reconcile") {
              const stale = world.publication.kubeconfig === "stale";
              const result = stepEngineControlPlane({
                controlPlane: world.controlPlane,
                owner: {
                  metadata: { name: "workload", namespace: "capi" },
                  status: { initialization: { infrastructureProvisioned: true } },
                },
                profile,
                providerName: PROVIDER,
                observation: { backend: world.backend, publication: world.publication },
                now: NOW,
                timing: TIMING,
              });
              const running = world.backend.exists ? world.backend.version : undefined;
              for (const command of result.commands) {
                if ((command.kind === "update" || command.kind === "create") && running !== undefined) {
                  expect(
                    compareVersions(command.version, running),
                    JSON.stringify(command),
                  ).toBeGreaterThanOrEqual(0);
                }
                if (command.kind === "create") expect(world.backend.exists).toBe(false);
              }
              if (stale && result.state.startsWith("running")) {
                expect(result.commands).toContainEqual(
                  expect.objectContaining({ kind: "publish", kubeconfig: true }),
                );
                reached.rotated++;
              }
              let next = world.controlPlane;
              for (const part of ["metadata", "spec", "status"] as const) {
                const patch = changesTo(next, part, result.desired[part]);
                if (patch.length > 0) next = withOperations(next, patch);
              }
              const status = next.status;
              if (initialized) expect(status?.initialization?.controlPlaneInitialized).toBe(true);
              initialized = status?.initialization?.controlPlaneInitialized === true;
              if (initialized) reached.initialized++;
              if (endpoint !== undefined) expect(next.spec.controlPlaneEndpoint).toEqual(endpoint);
              endpoint = next.spec.controlPlaneEndpoint;
              if (result.state.startsWith("running")) {
                expect(status?.conditions?.find((c) => c.type === "Available")?.status).toBe("True");
              }
              if (result.state === "running.refused") {
                reached.refused++;
                expect(status?.conditions?.find((c) => c.type === "UpToDate")?.status).toBe("False");
              }
              if (result.state === "running.updating") reached.updating++;
              world.controlPlane = next;
              carryOut(world, result.commands);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    // Every conditional invariant above was exercised.
    expect(reached.refused).toBeGreaterThan(0);
    expect(reached.updating).toBeGreaterThan(0);
    expect(reached.initialized).toBeGreaterThan(0);
    expect(reached.rotated).toBeGreaterThan(0);
  });
});
