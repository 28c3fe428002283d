/** Invariants of the Cluster step over random worlds: users, other controllers and a backend acting in any order. */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterObservation } from "../../../src/api/backend.ts";
import type { Cluster } from "../../../src/api/cluster.ts";
import { CLUSTER_FINALIZERS } from "../../../src/api/constants/cluster.ts";
import type { ClusterCommand } from "../../../src/machines/cluster/step.ts";
import { clusterResponsibility } from "../../../src/machines/cluster/step.ts";
import { aCluster, aProfile, CLAIMANT, input, NOW } from "../../support/cluster-fixtures.ts";
import { afterWrites, stepClusterWrites } from "../../support/step-writes.ts";

/** The backend's one cluster, as a tiny model. */
type Backend = ClusterObservation;

/** Something that can happen between or during reconciles. */
type WorldEvent =
  | { kind: "reconcile"; commandsFail: boolean }
  | { kind: "backendProgresses" }
  | { kind: "userDeletes" }
  | { kind: "foreignFinalizer"; add: boolean }
  | { kind: "userSetsVersion"; version: string | undefined };

const worldEvent: fc.Arbitrary<WorldEvent> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("reconcile" as const), commandsFail: fc.boolean() }),
  },
  { weight: 3, arbitrary: fc.constant({ kind: "backendProgresses" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "userDeletes" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("foreignFinalizer" as const), add: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("userSetsVersion" as const),
      version: fc.constantFrom(undefined, "1.32", "1.33", "1.33.2", "1.20", "nonsense"),
    }),
  },
);

const FOREIGN = "request.clusters.openmcp.cloud/0000-1111";

/** Carries out backend commands on the model, as an idempotent backend would. */
function run(backend: Backend, commands: readonly ClusterCommand[]): Backend {
  let next = backend;
  for (const command of commands) {
    if (command.kind === "create" && !next.exists)
      next = { exists: true, phase: "provisioning", version: command.version };
    if (command.kind === "update" && next.exists && next.phase !== "deleting") {
      next = { exists: true, phase: "updating", version: command.version };
    }
    if (command.kind === "delete" && next.exists) next = { ...next, phase: "deleting" };
  }
  return next;
}

function progress(backend: Backend): Backend {
  if (!backend.exists) return backend;
  if (backend.phase === "deleting") return { exists: false };
  return { ...backend, phase: "ready", endpoint: "https://10.0.0.1:443" };
}

/** The API server's view: an object whose deletion was requested disappears once no finalizer is left. */
const gone = (cluster: Cluster) =>
  cluster.metadata.deletionTimestamp !== undefined && (cluster.metadata.finalizers ?? []).length === 0;

function withFinalizers(cluster: Cluster, finalizers: string[]): Cluster {
  return { ...cluster, metadata: { ...cluster.metadata, finalizers } };
}

/** How often each conditional invariant below was checked, so a test that never reaches one fails. */
const reached = { ordered: 0, idleAgain: 0, ready: 0, backendHeld: 0, failedCommand: 0 };

describe("the Cluster step, over random sequences of world events", () => {
  it("keeps every invariant at every step and always ends with the finalizer gone after deletion", () => {
    fc.assert(
      fc.property(fc.array(worldEvent, { maxLength: 40 }), (events) => {
        let cluster = aCluster();
        let backend: Backend = { exists: false };
        let lastError: string | undefined;

        const reconcile = (commandsFail: boolean) => {
          const result = stepClusterWrites(
            input(cluster, backend, lastError === undefined ? {} : { lastError }),
          );
          cluster = afterWrites(cluster, result);
          // A backend call happens only after the finalizer is on the object.
          if (result.commands.length > 0) {
            reached.ordered++;
            expect(cluster.metadata.finalizers).toContain(CLUSTER_FINALIZERS.cluster);
          }
          // Level-triggered and idle at rest: when nothing was ordered, the same world again yields no write.
          if (!gone(cluster) && result.commands.length === 0) {
            reached.idleAgain++;
            const again = stepClusterWrites(
              input(cluster, backend, lastError === undefined ? {} : { lastError }),
            );
            expect(again.metadataPatch).toEqual([]);
            expect(again.statusPatch).toEqual([]);
          }
          // Ready always publishes an endpoint.
          if (cluster.status?.phase === "Ready") {
            reached.ready++;
            expect(cluster.status.endpoints?.some((e) => e.name === "apiserver-external" && e.url)).toBe(
              true,
            );
          }
          if (commandsFail && result.commands.length > 0) {
            reached.failedCommand++;
            lastError = "injected backend fault";
          } else {
            backend = run(backend, result.commands);
            lastError = undefined;
          }
        };

        for (const event of events) {
          if (gone(cluster)) break;
          switch (event.kind) {
            case "reconcile":
              reconcile(event.commandsFail);
              break;
            case "backendProgresses":
              backend = progress(backend);
              break;
            case "userDeletes":
              cluster = { ...cluster, metadata: { ...cluster.metadata, deletionTimestamp: NOW } };
              break;
            case "foreignFinalizer": {
              const others = (cluster.metadata.finalizers ?? []).filter((f) => f !== FOREIGN);
              const deleting = cluster.metadata.deletionTimestamp !== undefined;
              // The API server forbids new finalizers on an object being deleted.
              if (event.add && !deleting) cluster = withFinalizers(cluster, [...others, FOREIGN]);
              if (!event.add) cluster = withFinalizers(cluster, others);
              break;
            }
            case "userSetsVersion":
              if (cluster.metadata.deletionTimestamp) break;
              cluster = {
                ...cluster,
                metadata: { ...cluster.metadata, generation: (cluster.metadata.generation ?? 1) + 1 },
                spec: {
                  ...cluster.spec,
                  ...(event.version ? { kubernetes: { version: event.version } } : {}),
                },
              };
              break;
          }
          // The finalizer is present whenever the backend may hold a cluster for this object.
          if (backend.exists && !gone(cluster)) {
            reached.backendHeld++;
            expect(cluster.metadata.finalizers).toContain(CLUSTER_FINALIZERS.cluster);
          }
        }

        // Finally everyone lets go: the foreign finalizer is removed, the user deletes, the backend works.
        if (!gone(cluster)) {
          cluster = withFinalizers(
            { ...cluster, metadata: { ...cluster.metadata, deletionTimestamp: NOW } },
            (cluster.metadata.finalizers ?? []).filter((f) => f !== FOREIGN),
          );
        }
        for (let i = 0; i < 10 && !gone(cluster); i++) {
          reconcile(false);
          backend = progress(backend);
        }
        expect(gone(cluster)).toBe(true);
        expect(backend.exists).toBe(false);
      }),
      { numRuns: 300 },
    );
    // Every conditional invariant above was checked, in many worlds.
    for (const [branch, count] of Object.entries(reached)) expect(count, branch).toBeGreaterThan(10);
  });

  // Responsibility is decided once, by the kind's `open`, which gives no reconciliation (no write, no
  // command, no Event) to a Cluster that is not ours; the step never sees one.
  it("never patches or commands anything for a Cluster whose profile is another provider's", () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.boolean(),
        fc.option(fc.constantFrom("1.32", "1.20", "x"), { nil: undefined }),
        (deleting, ourFinalizer, version) => {
          const base = aCluster({
            ...(version ? { version } : {}),
            ...(ourFinalizer ? { finalizers: [CLUSTER_FINALIZERS.cluster] } : {}),
          });
          const cluster = deleting
            ? { ...base, metadata: { ...base.metadata, deletionTimestamp: NOW } }
            : base;
          expect(clusterResponsibility(cluster, aProfile("another-provider"), CLAIMANT)).toBe("foreign");
        },
      ),
    );
  });
});
