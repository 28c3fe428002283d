/**
 * `plan` predicts what the engine then does, for ClusterRequests and the Clusters the scheduler gives them: random
 * worlds of requests (own Clusters, shared ones, purposes no mapping serves, proposed prefixes good and bad, some
 * ignored, some deleted), settled first by the engine's own machine controllers of both kinds (the scheduler's
 * commands carried out into the world, the simulated backend's at once or never), and a random change to a request
 * or a Cluster. The writes and commands `plan` predicts per object equal what the real controllers write (at their
 * MachineWriter) and issue (at their `run`), up to each object's first commands; objects the plan leaves out get
 * none. 1,000 worlds, in memory (see plan.property.test.ts for why).
 *
 * Purposes with a limited tenancyCount (1, 2, 3: up to that many requests on one Shared Cluster, then a new one)
 * and up to six requests: a request of a full purpose must go to a new Cluster, and the requests of such a purpose
 * decide one after the other (the kind's `serialize`): one held at its commands holds the others of its purpose,
 * in the engine and in the plan.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../src/api/cluster.ts";
import type { ClusterRequest } from "../../../src/api/cluster-request.ts";
import { CLUSTER_REQUEST_ANNOTATIONS } from "../../../src/api/constants/cluster-request.ts";
import { ANNOTATIONS, OPERATIONS, RESOURCES } from "../../../src/api/constants.ts";
import type { SchedulerConfig } from "../../../src/api/scheduler-config.ts";
import { servedRequests } from "../../../src/machines/cluster-request/cluster-claims.ts";
import type { ClusterRequestCommand } from "../../../src/machines/cluster-request/step.ts";
import { clusterKind } from "../../../src/runtime/kinds/cluster/kind.ts";
import { clusterRequestKind } from "../../../src/runtime/kinds/cluster-request/kind.ts";
import type { MachineKind } from "../../../src/runtime/machine-kind.ts";
import type { PlanChange } from "../../../src/runtime/plan/plan.ts";
import { mcpSchedulerConfigRead } from "../../fixtures/scheduler-config.ts";
import { aClusterRequest, stored } from "../../support/builders.ts";
import type { MemoryApi } from "../../support/memory-api.ts";
import { schedulingInto } from "../../support/memory-scheduler.ts";
import {
  Branches,
  expectPlanPredictsEngine,
  PLAN_AT,
  PLAN_TIMING,
  planPace,
  planProviderConfig,
  settledPlanEngine,
} from "../../support/plan-harness.ts";

const NAMESPACE = "team";
const { profileName: PROFILE, memoryApi } = planProviderConfig();

/** A Shared purpose of at most `tenancyCount` requests per Cluster. */
const limited = (tenancyCount: number) => ({
  tenancyCount,
  template: { metadata: { namespace: "clusters" }, spec: { profile: PROFILE, tenancy: "Shared" as const } },
});

/**
 * `mcp`: a Cluster of its own per request; `platform`: one shared Cluster for all; `unmapped`: no mapping;
 * `team1`, `team2`, `team3`: Shared Clusters of at most 1, 2, 3 requests each.
 */
const mcpOnly = mcpSchedulerConfigRead(PROFILE, "clusters");
const scheduler: SchedulerConfig = {
  ...mcpOnly,
  purposeMappings: {
    ...mcpOnly.purposeMappings,
    platform: {
      tenancyCount: 0,
      template: { metadata: { namespace: "clusters" }, spec: { profile: PROFILE, tenancy: "Shared" } },
    },
    team1: limited(1),
    team2: limited(2),
    team3: limited(3),
  },
};

const LIMITED = new Map([
  ["team1", 1],
  ["team2", 2],
  ["team3", 3],
]);

/** One request of a world. */
interface RequestSeed {
  /** `focus`: the world's one limited purpose (most of its requests ask for it, so its Clusters fill up). */
  readonly purpose: "mcp" | "platform" | "unmapped" | "team1" | "team2" | "team3" | "focus";
  readonly prefix: string | undefined;
  readonly ignored: boolean;
  /** Deleted before the world settles again. */
  readonly deleted: boolean;
}

const seldom = fc.constantFrom(false, false, false, true);
const prefix = fc.constantFrom(undefined, undefined, "ab-", "abc-", "Bad_Prefix");
const requestSeed: fc.Arbitrary<RequestSeed> = fc.record({
  purpose: fc.constantFrom(
    "mcp" as const,
    "platform" as const,
    "unmapped" as const,
    "team1" as const,
    "team3" as const,
    "focus" as const,
    "focus" as const,
    "focus" as const,
    "focus" as const,
    "focus" as const,
    "focus" as const,
  ),
  prefix,
  ignored: seldom,
  deleted: seldom,
});

const pace = planPace("provisionDelayMs", "deleteDelayMs");

type ChangeSeed =
  | { readonly kind: "create"; readonly seed: RequestSeed }
  /** Two new requests at once (one plan of both): of a limited purpose, they decide one after the other. */
  | { readonly kind: "createTwo"; readonly seed: RequestSeed }
  | { readonly kind: "delete" | "label" | "ignore" | "same"; readonly at: number }
  | { readonly kind: "prefix"; readonly at: number; readonly prefix: string | undefined }
  | { readonly kind: "deleteCluster" | "labelCluster"; readonly at: number };

const at = fc.nat(7);
const changeSeed: fc.Arbitrary<ChangeSeed> = fc.oneof(
  // Twice as likely: a new request of a full purpose is what must go to a new Cluster.
  { arbitrary: fc.record({ kind: fc.constant("create" as const), seed: requestSeed }), weight: 2 },
  fc.record({ kind: fc.constant("createTwo" as const), seed: requestSeed }),
  fc.record({
    kind: fc.constantFrom("delete" as const, "label" as const, "ignore" as const, "same" as const),
    at,
  }),
  // Deletes once more: only a request without a finalizer (ignored, or unmapped) is deleted at once, about 10 of
  // 1,000 runs otherwise.
  fc.record({ kind: fc.constant("delete" as const), at }),
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

/** The manifests for the change, made from the world as it stands. */
function changesOf(change: ChangeSeed, api: MemoryApi, size: number): readonly PlanChange[] {
  if (change.kind !== "createTwo") return [changeOf(change, api, size)];
  return [1, 2].map((more) => ({ apply: requestOf(size + more, change.seed) as never }));
}

/** A manifest for one change, made from the world as it stands. */
function changeOf(
  change: Exclude<ChangeSeed, { kind: "createTwo" }>,
  api: MemoryApi,
  size: number,
): PlanChange {
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

/** Requests and a change, `focus` resolved to the world's limited purpose. */
const world = fc
  .record({
    focus: fc.constantFrom("team1" as const, "team2" as const, "team3" as const),
    seeds: fc.array(requestSeed, { minLength: 1, maxLength: 6 }),
    change: changeSeed,
  })
  .map(({ focus, seeds, change }) => {
    const resolved = (seed: RequestSeed): RequestSeed =>
      seed.purpose === "focus" ? { ...seed, purpose: focus } : seed;
    return {
      seeds: seeds.map(resolved),
      change:
        change.kind === "create" || change.kind === "createTwo"
          ? { ...change, seed: resolved(change.seed) }
          : change,
    };
  });

const NEW_REQUEST: RequestSeed = { purpose: "mcp", prefix: undefined, ignored: false, deleted: false };

const branches = new Branches();

async function predictionHolds(
  seeds: readonly RequestSeed[],
  paced: { provisionDelayMs: number; deleteDelayMs: number },
  change: ChangeSeed,
  seen = branches,
) {
  const api = memoryApi([
    ...seeds.map((seed, index) => ({ resource: RESOURCES.ClusterRequest, object: requestOf(index, seed) })),
  ]);
  // The world as the engine leaves it: settled, the requests asked to go marked for deletion and settled again.
  const { engine, options } = await settledPlanEngine(
    api,
    {
      kinds: [clusterKind as MachineKind, clusterRequestKind as MachineKind],
      kindSettings: {
        Cluster: PLAN_TIMING,
        ClusterRequest: { ...PLAN_TIMING, schedulerConfig: { current: () => scheduler, onChange: () => {} } },
      },
      pace: paced,
      setupRuns: { ClusterRequest: schedulingInto(api, PLAN_AT) },
    },
    {
      resource: RESOURCES.ClusterRequest,
      keys: seeds.flatMap((seed, index) => (seed.deleted ? [`${NAMESPACE}/r${index}`] : [])),
    },
  );
  try {
    for (const object of api.objects()) {
      if (object.kind === "ClusterRequest") {
        const request = object as ClusterRequest;
        const reason = request.status?.conditions?.find((c) => c.status === "False")?.reason;
        seen.saw(`before: request ${request.status?.phase ?? "none"}${reason ? ` ${reason}` : ""}`);
      }
      if (object.kind === "Cluster") {
        const cluster = object as Cluster;
        seen.saw(
          `before: Cluster ${cluster.spec.tenancy} ${cluster.status?.providerStatus?.state ?? "none"}`,
        );
      }
    }

    // The Shared Clusters of each limited purpose, and which of them are full, as the change finds them.
    const purposeOf = new Map(
      api
        .objects()
        .filter((object) => object.kind === "ClusterRequest")
        .map((object) => {
          const request = object as ClusterRequest;
          return [request.metadata.uid ?? "", request.spec.purpose] as const;
        }),
    );
    const sharedOf = new Map<string, { clusters: number; full: number }>();
    for (const object of api.objects()) {
      if (object.kind !== "Cluster" || (object as Cluster).spec.tenancy !== "Shared") continue;
      const served = servedRequests(object as Cluster);
      const purpose = purposeOf.get(served[0] ?? "");
      const limit = LIMITED.get(purpose ?? "");
      if (purpose === undefined || limit === undefined) continue;
      const counts = sharedOf.get(purpose) ?? { clusters: 0, full: 0 };
      counts.clusters++;
      if (served.length >= limit) {
        counts.full++;
        seen.saw(`before: limited Cluster full (${limit})`);
      }
      sharedOf.set(purpose, counts);
    }

    const proposed = changesOf(change, api, seeds.length);
    const result = await expectPlanPredictsEngine(api, engine, options, proposed, seen);
    for (const object of result.objects) {
      if (object.kind !== "ClusterRequest") continue;
      const request = api.get(RESOURCES.ClusterRequest, `${object.namespace}/${object.name}`) as
        | ClusterRequest
        | undefined;
      const purpose = request?.spec.purpose ?? "";
      if (!LIMITED.has(purpose)) continue;
      if (/decides after/.test(object.message ?? "")) seen.saw("plan: limited request waits for another");
      for (const step of object.steps)
        for (const { command } of step.commands) {
          const assign = command as ClusterRequestCommand;
          if (assign.kind !== "assign") continue;
          const counts = sharedOf.get(purpose);
          if (!assign.placement.created) seen.saw("plan: limited request joins a Cluster with room");
          else if (counts && counts.clusters === counts.full)
            seen.saw("plan: limited request given a new Cluster, its purpose's full");
          else if (!counts) seen.saw("plan: limited request given its purpose's first Cluster");
        }
    }
    return result;
  } finally {
    engine.stop();
  }
}

describe("plan of ClusterRequests and their Clusters", () => {
  it("plans two new requests of a full purpose of 2: the first a new Cluster, the second after it", async () => {
    const team2 = { purpose: "team2", prefix: undefined, ignored: false, deleted: false } as const;
    const result = await predictionHolds(
      [team2, team2],
      { provisionDelayMs: 0, deleteDelayMs: 0 },
      { kind: "createTwo", seed: team2 },
      new Branches(),
    );
    const planned = (name: string) => result.objects.find((object) => object.name === name);
    const commands = planned("r3")?.steps.flatMap((step) => step.commands) ?? [];
    expect(commands.map(({ command }) => (command as ClusterRequestCommand).kind)).toEqual(["assign"]);
    const assign = commands[0]?.command as Extract<ClusterRequestCommand, { kind: "assign" }>;
    expect(assign.placement.created).toBe(true);
    expect(planned("r4")).toMatchObject({ outcome: "awaitsCommands", steps: [] });
    expect(planned("r4")?.message).toContain("decides after ClusterRequest team/r3's commands");
    expect(result.summary.unknown).toEqual(["ClusterRequest team/r3", "ClusterRequest team/r4"]);
  });

  it("predicts the writes and commands of both kinds' machine controllers (1,000 worlds)", async () => {
    await fc.assert(
      fc.asyncProperty(world, pace, async ({ seeds, change }, paced) => {
        await predictionHolds(seeds, paced, change);
      }),
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
      "before: limited Cluster full (1)",
      "before: limited Cluster full (2)",
      "before: limited Cluster full (3)",
      "plan: limited request given a new Cluster, its purpose's full",
      "plan: limited request joins a Cluster with room",
      "plan: limited request waits for another",
    ]);
    console.log(`plan of ClusterRequests: ${JSON.stringify(Object.fromEntries(branches.counts()))}`);
  }, 600_000);
});
