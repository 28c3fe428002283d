/** Invariants of the scheduling decision over random request sequences: tenancy, exclusivity, prefixes, determinism, cleanup. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../src/api/cluster.ts";
import type { ClusterRequest } from "../../../src/api/cluster-request.ts";
import {
  CLUSTER_REQUEST_ANNOTATIONS,
  CLUSTER_REQUEST_LABELS,
} from "../../../src/api/constants/cluster-request.ts";
import {
  SCHEDULER_STRATEGIES,
  type SchedulerConfig,
  type SchedulerStrategy,
} from "../../../src/api/scheduler-config.ts";
import { prefixesOfOthers, servedRequests } from "../../../src/machines/cluster-request/cluster-claims.ts";
import { schedule } from "../../../src/machines/cluster-request/schedule.ts";
import { aClusterRequest, stored } from "../../support/builders.ts";
import { SchedulerWorld } from "../../support/scheduler-world.ts";

const PROFILE = "test.engine-test.small";

function configWith(strategy: SchedulerStrategy, limit: number): SchedulerConfig {
  return {
    scope: "Cluster",
    strategy,
    selectors: {},
    purposeMappings: {
      mcp: {
        tenancyCount: 0,
        template: { metadata: { namespace: "clusters" }, spec: { profile: PROFILE, tenancy: "Exclusive" } },
      },
      workload: {
        tenancyCount: limit,
        template: { metadata: { namespace: "clusters" }, spec: { profile: PROFILE, tenancy: "Shared" } },
      },
      platform: {
        tenancyCount: 0,
        template: { metadata: { namespace: "clusters" }, spec: { profile: PROFILE, tenancy: "Shared" } },
      },
    },
  };
}

interface RequestSpec {
  readonly purpose: "mcp" | "workload" | "platform";
  readonly namespace: string;
  readonly prefix: string | undefined;
  readonly randomize: boolean;
  readonly dedicated: boolean;
}

const requestSpec: fc.Arbitrary<RequestSpec> = fc.record({
  purpose: fc.constantFrom("mcp" as const, "workload" as const, "platform" as const),
  namespace: fc.constantFrom("team-a", "team-b"),
  prefix: fc.constantFrom(undefined, "ab-", "abc-", "a", "team-", "team-x-", "Bad_Prefix"),
  randomize: fc.boolean(),
  dedicated: fc.boolean(),
});

function requestOf(spec: RequestSpec, index: number): ClusterRequest {
  const annotations: Record<string, string> = {};
  if (spec.prefix !== undefined) annotations[CLUSTER_REQUEST_ANNOTATIONS.prefix] = spec.prefix;
  if (spec.dedicated) annotations[CLUSTER_REQUEST_ANNOTATIONS.dedicated] = "true";
  return stored(
    aClusterRequest({
      name: `request-${index}`,
      namespace: spec.namespace,
      purpose: spec.purpose,
      annotations,
      ...(spec.randomize ? { labels: { [CLUSTER_REQUEST_LABELS.randomizeClusterName]: "true" } } : {}),
    }),
    { uid: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}` },
  );
}

/** How often each conditional invariant below was checked, so a test that never reaches one fails. */
const reached = { exclusive: 0, limited: 0, prefixesCompared: 0, granted: 0 };

/** What must hold of the world after every change. */
function checkInvariants(world: SchedulerWorld, limit: number): void {
  for (const cluster of world.clusters.values()) {
    const served = servedRequests(cluster);
    if (cluster.spec.tenancy === "Exclusive") {
      reached.exclusive++;
      expect(served.length).toBeLessThanOrEqual(1);
    } else if (cluster.spec.purposes?.includes("workload") && limit > 0) {
      reached.limited++;
      expect(served.length).toBeLessThanOrEqual(limit);
    }
    for (const uid of served) {
      const mine = cluster.metadata.annotations?.[`prefix.engine.openmcp.cloud/${uid}`];
      if (mine === undefined) continue;
      // The oracle is written out here, not the code under test's prefixesCollide.
      for (const other of prefixesOfOthers(cluster, uid)) {
        reached.prefixesCompared++;
        expect(mine.startsWith(other) || other.startsWith(mine), `${mine} vs ${other}`).toBe(false);
      }
    }
  }
  for (const request of world.requests.values()) {
    const grant = world.grants.get(`${request.metadata.namespace}/${request.metadata.name}`);
    if (!grant) continue;
    reached.granted++;
    const cluster = world.clusters.get(`${grant.spec.clusterRef.namespace}/${grant.spec.clusterRef.name}`);
    expect(cluster?.spec.purposes).toContain(request.spec.purpose);
  }
}

describe("scheduling decisions", () => {
  it("never exceed tenancyCount, never share an Exclusive Cluster, never grant colliding prefixes, and clean up after the last request", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SCHEDULER_STRATEGIES),
        fc.integer({ min: 0, max: 3 }),
        fc.array(requestSpec, { minLength: 1, maxLength: 25 }),
        fc.func(fc.integer()),
        (strategy, limit, specs, order) => {
          const world = new SchedulerWorld(configWith(strategy, limit));
          const requests = specs.map(requestOf);
          for (const request of requests) {
            world.submit(request);
            checkInvariants(world, limit);
          }
          // Submitting again changes nothing: every request keeps its Cluster.
          const before = JSON.stringify([...world.grants.values()].map((grant) => grant.spec));
          for (const request of requests) world.submit(request);
          expect(JSON.stringify([...world.grants.values()].map((grant) => grant.spec))).toBe(before);
          const removal = [...requests].sort((a, b) => order(a.metadata.name) - order(b.metadata.name));
          for (const request of removal) {
            world.remove(request);
            checkInvariants(world, limit);
          }
          const marked = [...world.clusters.values()].filter(
            (cluster: Cluster) =>
              cluster.metadata.labels?.[CLUSTER_REQUEST_LABELS.deleteWithoutRequests] === "true",
          );
          expect(marked).toEqual([]);
        },
      ),
    );
    // Every conditional invariant above was checked, in many worlds.
    for (const [branch, count] of Object.entries(reached)) expect(count, branch).toBeGreaterThan(10);
  });

  it("decide the same whatever order the caches list the Clusters in", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SCHEDULER_STRATEGIES),
        fc.integer({ min: 0, max: 3 }),
        fc.array(requestSpec, { minLength: 2, maxLength: 15 }),
        (strategy, limit, specs) => {
          const world = new SchedulerWorld(configWith(strategy, limit));
          const requests = specs.map(requestOf);
          for (const request of requests.slice(0, -1)) world.submit(request);
          const last = requests.at(-1) as ClusterRequest;
          world.requests.set(`${last.metadata.namespace}/${last.metadata.name}`, last);
          const forward = schedule(last, world.view(last));
          const backward = schedule(
            last,
            world.view(last, (clusters) => [...clusters].reverse()),
          );
          expect(backward).toEqual(forward);
        },
      ),
    );
  });
});
