/**
 * `plan` predicts what the engine then does, for ClusterRequests and the Clusters the scheduler gives them: random
 * worlds of requests (own Clusters, shared ones, purposes no mapping serves, proposed prefixes good and bad, some
 * ignored, some deleted), settled first by the engine's own machine controllers of both kinds (the scheduler's
 * commands carried out into the world, the simulated backend's at once or never), and a random change to a request
 * or a Cluster. The writes and commands `plan` predicts per object equal what the real controllers write (at their
 * MachineWriter) and issue (at their `run`), up to each object's first commands; objects the plan leaves out get
 * none. 1,000 worlds, in memory (see plan.property.test.ts for why).
 *
 * No purpose with a limited tenancyCount: its requests decide one after the other (the kind's `serialize`), so
 * one held at its commands holds the others; a plan steps each as if alone (docs/plan.md, the order of a race).
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import type { Cluster } from "../../../src/api/cluster.ts";
import type { ClusterRequest } from "../../../src/api/cluster-request.ts";
import { CLUSTER_REQUEST_ANNOTATIONS } from "../../../src/api/constants/cluster-request.ts";
import { ANNOTATIONS, OPERATIONS, RESOURCES } from "../../../src/api/constants.ts";
import type { ProviderConfig } from "../../../src/api/provider-config.ts";
import type { SchedulerConfig } from "../../../src/api/scheduler-config.ts";
import { desiredClusterProfile } from "../../../src/machines/cluster-profile/profile.ts";
import { SimulatedBackend } from "../../../src/providers/simulated.ts";
import { clusterKind } from "../../../src/runtime/kinds/cluster/kind.ts";
import { clusterRequestKind } from "../../../src/runtime/kinds/cluster-request/kind.ts";
import type { MachineKind } from "../../../src/runtime/machine-kind.ts";
import type { PlanChange } from "../../../src/runtime/plan/plan.ts";
import { aClusterRequest, aProviderConfig, stored } from "../../support/builders.ts";
import { MemoryApi } from "../../support/memory-api.ts";
import { schedulingInto } from "../../support/memory-scheduler.ts";
import {
  Branches,
  expectPlanPredictsEngine,
  type MemoryEngineOptions,
  markDeleted,
  memoryEngine,
  stillClock,
} from "../../support/plan-harness.ts";

const PROVIDER = "engine-test";
const ENVIRONMENT = "test";
const NAMESPACE = "team";
const AT = Date.parse("2026-11-28T12:00:00Z");
const clock = stillClock(AT);
const LONG = 600_000;
const OFFERED = [{ version: "1.33.3" }, { version: "1.32.7" }];
const TIMING = { timing: { pollMs: 100, retryMs: 200, resyncMs: 60_000 } };

const config: ProviderConfig = stored(
  aProviderConfig({ name: "small", providerRef: { name: PROVIDER }, supportedVersions: OFFERED }),
  { uid: "c0nf1g00-0000-4000-8000-000000000001", resourceVersion: "1" },
);
const profile = desiredClusterProfile(
  config,
  { providerName: PROVIDER, environment: ENVIRONMENT, backends: ["simulated"] },
  OFFERED,
  [],
);
const PROFILE = profile.metadata.name ?? "";

/** `mcp`: a Cluster of its own per request; `platform`: one shared Cluster for all; `unmapped`: no mapping. */
const scheduler: SchedulerConfig = {
  scope: "Cluster",
  strategy: "Balanced",
  selectors: {},
  purposeMappings: {
    mcp: {
      tenancyCount: 0,
      template: { metadata: { namespace: "clusters" }, spec: { profile: PROFILE, tenancy: "Exclusive" } },
    },
    platform: {
      tenancyCount: 0,
      template: { metadata: { namespace: "clusters" }, spec: { profile: PROFILE, tenancy: "Shared" } },
    },
  },
};

/** One request of a world. */
interface RequestSeed {
  readonly purpose: "mcp" | "platform" | "unmapped";
  readonly prefix: string | undefined;
  readonly ignored: boolean;
  /** Deleted before the world settles again. */
  readonly deleted: boolean;
}

const seldom = fc.constantFrom(false, false, false, true);
const prefix = fc.constantFrom(undefined, undefined, "ab-", "abc-", "Bad_Prefix");
const requestSeed: fc.Arbitrary<RequestSeed> = fc.record({
  purpose: fc.constantFrom("mcp" as const, "mcp" as const, "platform" as const, "unmapped" as const),
  prefix,
  ignored: seldom,
  deleted: seldom,
});

const pace = fc.record({
  provisionDelayMs: fc.constantFrom(0, LONG),
  deleteDelayMs: fc.constantFrom(0, LONG),
});

type ChangeSeed =
  | { readonly kind: "create"; readonly seed: RequestSeed }
  | { readonly kind: "delete" | "label" | "ignore" | "same"; readonly at: number }
  | { readonly kind: "prefix"; readonly at: number; readonly prefix: string | undefined }
  | { readonly kind: "deleteCluster" | "labelCluster"; readonly at: number };

const at = fc.nat(5);
const changeSeed: fc.Arbitrary<ChangeSeed> = fc.oneof(
  fc.record({ kind: fc.constant("create" as const), seed: requestSeed }),
  fc.record({
    kind: fc.constantFrom("delete" as const, "label" as const, "ignore" as const, "same" as const),
    at,
  }),
  fc.record({ kind: fc.constant("prefix" as const), at, prefix }),
  fc.record({ kind: fc.constantFrom("deleteCluster" as const, "labelCluster" as const), at }),
);

function requestOf(index: number, seed: RequestSeed): ClusterRequest {
  const annotations: Record<string, string> = {};
  if (seed.prefix !== undefined) annotations[CLUSTER_REQUEST_ANNOTATIONS.prefix] = seed.prefix;
  if (seed.ignored) annotations[ANNOTATIONS.operation] = OPERATIONS.ignore;
  return stored(
    aClusterRequest({ name: `r${index}`, namespace: NAMESPACE, purpose: seed.purpose, annotations }),
    { uid: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`, resourceVersion: "1" },
  );
}

/** A manifest for the change, made from the world as it stands. */
function changeOf(change: ChangeSeed, api: MemoryApi, size: number): PlanChange {
  const manifest = <T extends { readonly status?: unknown }>(object: T): PlanChange => {
    const { status: _status, ...rest } = object;
    return { apply: rest as never };
  };
  if (change.kind === "create") return { apply: requestOf(size + 1, change.seed) as never };
  if (change.kind === "deleteCluster" || change.kind === "labelCluster") {
    const clusters = api.objects().filter((object) => object.kind === "Cluster") as Cluster[];
    const cluster = clusters[change.at % Math.max(1, clusters.length)];
    if (!cluster) return { apply: requestOf(size + 2, { ...NEW_REQUEST }) as never };
    if (change.kind === "deleteCluster")
      return {
        delete: { kind: "Cluster", namespace: cluster.metadata.namespace, name: cluster.metadata.name ?? "" },
      };
    return manifest({
      ...cluster,
      metadata: { ...cluster.metadata, labels: { ...cluster.metadata.labels, tier: "gold" } },
    });
  }
  const request = api.get(RESOURCES.ClusterRequest, `${NAMESPACE}/r${change.at % size}`) as
    | ClusterRequest
    | undefined;
  if (!request) return { apply: requestOf(size + 2, { ...NEW_REQUEST }) as never };
  if (change.kind === "delete")
    return { delete: { kind: "ClusterRequest", namespace: NAMESPACE, name: request.metadata.name ?? "" } };
  const annotations = { ...request.metadata.annotations };
  switch (change.kind) {
    case "same":
      return manifest(request);
    case "label":
      return manifest({ ...request, metadata: { ...request.metadata, labels: { team: "blue" } } });
    case "ignore":
      annotations[ANNOTATIONS.operation] = OPERATIONS.ignore;
      return manifest({ ...request, metadata: { ...request.metadata, annotations } });
    default: {
      const proposed = "prefix" in change ? change.prefix : undefined;
      if (proposed === undefined) delete annotations[CLUSTER_REQUEST_ANNOTATIONS.prefix];
      else annotations[CLUSTER_REQUEST_ANNOTATIONS.prefix] = proposed;
      return manifest({ ...request, metadata: { ...request.metadata, annotations } });
    }
  }
}

const NEW_REQUEST: RequestSeed = { purpose: "mcp", prefix: undefined, ignored: false, deleted: false };

const branches = new Branches();

async function predictionHolds(
  seeds: readonly RequestSeed[],
  paced: { provisionDelayMs: number; deleteDelayMs: number },
  change: ChangeSeed,
) {
  const api = new MemoryApi([
    { resource: RESOURCES.ProviderConfig, object: config },
    { resource: RESOURCES.ClusterProfile, object: profile },
    ...seeds.map((seed, index) => ({ resource: RESOURCES.ClusterRequest, object: requestOf(index, seed) })),
  ]);
  const options: MemoryEngineOptions = {
    kinds: [clusterKind as MachineKind, clusterRequestKind as MachineKind],
    kindSettings: {
      Cluster: TIMING,
      ClusterRequest: { ...TIMING, schedulerConfig: { current: () => scheduler, onChange: () => {} } },
    },
    backend: new SimulatedBackend({ ...paced, clock }),
    providerName: PROVIDER,
    environment: ENVIRONMENT,
    clock,
    setupRuns: { ClusterRequest: schedulingInto(api, AT) },
  };
  const engine = await memoryEngine(api, options);
  try {
    // The world as the engine leaves it: settled, the requests asked to go marked for deletion and settled again.
    await engine.settle();
    seeds.forEach((seed, index) => {
      const live = api.get(RESOURCES.ClusterRequest, `${NAMESPACE}/r${index}`);
      if (seed.deleted && live) markDeleted(api, live, AT);
    });
    await engine.settle();
    for (const object of api.objects()) {
      if (object.kind === "ClusterRequest") {
        const request = object as ClusterRequest;
        const reason = request.status?.conditions?.find((c) => c.status === "False")?.reason;
        branches.saw(`before: request ${request.status?.phase ?? "none"}${reason ? ` ${reason}` : ""}`);
      }
      if (object.kind === "Cluster") {
        const cluster = object as Cluster;
        branches.saw(
          `before: Cluster ${cluster.spec.tenancy} ${cluster.status?.providerStatus?.state ?? "none"}`,
        );
      }
    }

    await expectPlanPredictsEngine(api, engine, options, changeOf(change, api, seeds.length), branches);
  } finally {
    engine.stop();
  }
}

describe("plan of ClusterRequests and their Clusters", () => {
  it("predicts the writes and commands of both kinds' machine controllers (1,000 worlds)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(requestSeed, { minLength: 1, maxLength: 4 }),
        pace,
        changeSeed,
        predictionHolds,
      ),
      { numRuns: Number(process.env.PLAN_RUNS ?? 1_000) },
    );
    branches.expectReached([
      "before: request Granted",
      "before: request Granted InvalidPrefix",
      "before: request Pending ConfigurationProblem",
      "before: request none",
      "before: Cluster Exclusive ready",
      "before: Cluster Exclusive provisioning",
      "before: Cluster Exclusive deleting.releasing",
      "before: Cluster Shared ready",
      "plan: ClusterRequest settled",
      "plan: ClusterRequest awaitsCommands",
      "plan: ClusterRequest deleted",
      "plan: ClusterRequest unchanged",
      "plan: ClusterRequest notOurs",
      "plan: Cluster settled",
      "plan: commands",
      "plan: writes",
    ]);
  }, 600_000);
});
