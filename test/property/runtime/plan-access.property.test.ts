/**
 * `plan` predicts what the engine then does, for AccessRequests and their Clusters: random worlds of Clusters and
 * prepared AccessRequests (settled by the engine's own machine controllers first) and a random change to either
 * (the Cluster kind's wakes reach the AccessRequests); the writes and commands predicted per object equal what the
 * real machine controllers of both kinds write (at their MachineWriter) and issue (at their `run`), up to each
 * object's first commands, and objects the plan leaves out get none. 1,000 worlds, in memory.
 *
 * Preparation is off on both sides (`prepare: false`, as beside the openMCP operator): its controller writes
 * through the API server, not a MachineWriter; test/integration/plan.test.ts covers it on a real one.
 * The simulated backend gives no admin access, so requests end Denied or waiting, never Granted.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import type { AccessRequest } from "../../../src/api/access-request.ts";
import type { Cluster } from "../../../src/api/cluster.ts";
import { ACCESS_REQUEST_LABELS } from "../../../src/api/constants/access-request.ts";
import { HIBERNATE_ANNOTATION } from "../../../src/api/constants/hibernation.ts";
import { LABELS, RESOURCES } from "../../../src/api/constants.ts";
import { accessRequestKind } from "../../../src/runtime/kinds/access-request/kind.ts";
import { clusterKind } from "../../../src/runtime/kinds/cluster/kind.ts";
import type { MachineKind } from "../../../src/runtime/machine-kind.ts";
import type { PlanChange } from "../../../src/runtime/plan/plan.ts";
import { aCluster, anAccessRequest, stored } from "../../support/builders.ts";
import type { MemoryApi } from "../../support/memory-api.ts";
import {
  Branches,
  expectPlanPredictsEngine,
  PLAN_PROVIDER,
  PLAN_TIMING,
  planProviderConfig,
  settledPlanEngine,
} from "../../support/plan-harness.ts";

const NAMESPACE = "team";
const { profileName: PROFILE, memoryApi } = planProviderConfig();
const KINDS = {
  kinds: [clusterKind as MachineKind, accessRequestKind as MachineKind],
  kindSettings: { Cluster: PLAN_TIMING, AccessRequest: { prepare: false } },
};

/** One AccessRequest of a world: which Cluster (0, 1, or a missing one), token or OIDC, deleted before. */
interface RequestSeed {
  readonly cluster: 0 | 1 | "ghost";
  readonly oidc: boolean;
  readonly deleted: boolean;
}

const requestSeed: fc.Arbitrary<RequestSeed> = fc.record({
  cluster: fc.constantFrom(0 as const, 1 as const, "ghost" as const),
  oidc: fc.boolean(),
  deleted: fc.boolean(),
});

type ChangeSeed =
  | { readonly kind: "deleteCluster"; readonly at: 0 | 1 }
  | { readonly kind: "hibernateCluster"; readonly at: 0 | 1; readonly value: string }
  | { readonly kind: "createCluster"; readonly at: 0 | 1 }
  | { readonly kind: "createRequest"; readonly seed: RequestSeed }
  | { readonly kind: "deleteRequest"; readonly at: number }
  | { readonly kind: "changeRequest"; readonly at: number }
  | { readonly kind: "labelRequest"; readonly at: number };

const clusterAt = fc.constantFrom(0 as const, 1 as const);
const changeSeed: fc.Arbitrary<ChangeSeed> = fc.oneof(
  fc.record({ kind: fc.constant("deleteCluster" as const), at: clusterAt }),
  fc.record({
    kind: fc.constant("hibernateCluster" as const),
    at: clusterAt,
    value: fc.constantFrom("true", "false"),
  }),
  fc.record({ kind: fc.constant("createCluster" as const), at: clusterAt }),
  fc.record({ kind: fc.constant("createRequest" as const), seed: requestSeed }),
  fc.record({ kind: fc.constant("deleteRequest" as const), at: fc.nat(5) }),
  fc.record({ kind: fc.constant("changeRequest" as const), at: fc.nat(5) }),
  fc.record({ kind: fc.constant("labelRequest" as const), at: fc.nat(5) }),
);

function clusterOf(index: number): Cluster {
  return stored(
    aCluster({ name: `c${index}`, namespace: NAMESPACE, profile: PROFILE, tenancy: "Exclusive" }),
    { uid: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`, resourceVersion: "1" },
  );
}

/** A request as preparation leaves it: labelled for this provider and the profile, with its clusterRef. */
function requestOf(index: number, seed: RequestSeed): AccessRequest {
  const access = seed.oidc
    ? {
        oidc: {
          name: "team",
          issuer: "https://issuer.example.com",
          clientID: "engine",
          roleBindings: [
            {
              subjects: [{ kind: "User", name: "alice" }],
              roleRefs: [{ kind: "ClusterRole", name: "view" }],
            },
          ],
        },
      }
    : { token: { permissions: [{ rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] }] } };
  return stored(
    anAccessRequest({
      name: `a${index}`,
      namespace: NAMESPACE,
      labels: { [LABELS.provider]: PLAN_PROVIDER, [ACCESS_REQUEST_LABELS.profile]: PROFILE },
      clusterRef: { name: seed.cluster === "ghost" ? "ghost" : `c${seed.cluster}`, namespace: NAMESPACE },
      ...(access as { token: { permissions: [] } }),
    }),
    { uid: `00000000-0000-4000-9000-${String(index).padStart(12, "0")}`, resourceVersion: "1" },
  );
}

function changeOf(change: ChangeSeed, api: MemoryApi, requests: number): PlanChange {
  const manifest = <T extends { status?: unknown }>(object: T): PlanChange => {
    const { status: _status, ...rest } = object;
    return { apply: rest as never };
  };
  const request = (at: number) =>
    api.get(RESOURCES.AccessRequest, `${NAMESPACE}/a${at % Math.max(requests, 1)}`) as
      | AccessRequest
      | undefined;
  switch (change.kind) {
    case "deleteCluster":
    case "hibernateCluster":
    case "createCluster": {
      const live = api.get(RESOURCES.Cluster, `${NAMESPACE}/c${change.at}`) as Cluster | undefined;
      if (change.kind === "createCluster" || !live) return manifest(clusterOf(change.at));
      if (change.kind === "deleteCluster")
        return { delete: { kind: "Cluster", namespace: NAMESPACE, name: `c${change.at}` } };
      return manifest({
        ...live,
        metadata: { ...live.metadata, annotations: { [HIBERNATE_ANNOTATION]: change.value } },
      });
    }
    case "createRequest":
      return manifest(requestOf(requests + 1, change.seed));
    default: {
      const live = request(change.at);
      if (!live) return manifest(requestOf(requests + 2, { cluster: 0, oidc: false, deleted: false }));
      if (change.kind === "deleteRequest")
        return { delete: { kind: "AccessRequest", namespace: NAMESPACE, name: live.metadata.name ?? "" } };
      if (change.kind === "labelRequest")
        return manifest({
          ...live,
          metadata: { ...live.metadata, labels: { ...live.metadata.labels, team: "blue" } },
        });
      // Another permission: a new generation of a request that may have been answered.
      return manifest({
        ...live,
        spec: {
          ...live.spec,
          token: {
            permissions: [{ rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }] }],
          },
          oidc: undefined,
        } as never,
      });
    }
  }
}

const branches = new Branches();

async function predictionHolds(requests: readonly RequestSeed[], change: ChangeSeed) {
  const api = memoryApi([
    { resource: RESOURCES.Cluster, object: clusterOf(0) },
    { resource: RESOURCES.Cluster, object: clusterOf(1) },
    ...requests.map((seed, index) => ({ resource: RESOURCES.AccessRequest, object: requestOf(index, seed) })),
  ]);
  const pace = { provisionDelayMs: 0, updateDelayMs: 0, deleteDelayMs: 0 };
  const { engine, options } = await settledPlanEngine(
    api,
    { ...KINDS, pace },
    {
      resource: RESOURCES.AccessRequest,
      keys: requests.flatMap((seed, index) => (seed.deleted ? [`${NAMESPACE}/a${index}`] : [])),
    },
  );
  try {
    for (const object of api.objects())
      if (object.kind === "AccessRequest")
        branches.saw(`before: AccessRequest ${(object as AccessRequest).status?.phase ?? "none"}`);

    const result = await expectPlanPredictsEngine(
      api,
      engine,
      options,
      changeOf(change, api, requests.length),
      branches,
    );
    if (result.summary.accessAffected.length > 0) branches.saw("plan: access affected");
    if (
      result.objects.some(
        (object) => object.kind === "AccessRequest" && object.steps.some((step) => step.writes.length > 0),
      )
    )
      branches.saw("plan: AccessRequest writes");
  } finally {
    engine.stop();
  }
}

describe("plan of AccessRequests and their Clusters", () => {
  it("predicts the writes and commands of both kinds' machine controllers (1,000 worlds)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(requestSeed, { minLength: 1, maxLength: 4 }), changeSeed, predictionHolds),
      { numRuns: Number(process.env.PLAN_RUNS ?? 1_000) },
    );
    if (process.env.PLAN_RUNS) console.log(Object.fromEntries(branches.counts()));
    branches.expectReached([
      "plan: access affected",
      "plan: AccessRequest writes",
      "plan: AccessRequest settled",
      "plan: AccessRequest deleted",
      "plan: Cluster awaitsCommands",
    ]);
  }, 600_000);
});
