/**
 * `openmcp-engine run` killed with kill -9 mid-way, for each kind a run drives on an API server alone: a
 * Cluster mid-provisioning (exactly one backend create), ClusterRequests mid-scheduling (no Cluster made
 * twice, no grant lost). The EngineCluster's case needs Cluster API's manager: capi-provider.heavy.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../src/api/cluster-request-grant.ts";
import { CLUSTER_REQUEST_LABELS } from "../../src/api/constants/cluster-request.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { servedRequests } from "../../src/machines/cluster-request/cluster-claims.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { aCluster, aClusterRequest, aProviderConfig } from "../support/builders.ts";
import { eventually } from "../support/eventually.ts";
import { type KillNineCase, killNineMidway } from "../support/kill-nine.ts";
import { engineRunArgs } from "../support/processes.ts";
import { startWorld, type World } from "../support/world.ts";

let world: World;
/** Every `--state-dir` and configuration of this file: a temporary folder, never the repository's `.state/`. */
const folder = mkdtempSync(join(tmpdir(), "kill-nine-"));

beforeAll(async () => {
  world = await startWorld({ engine: false });
  const core = world.controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ["ops", "fleet", "teams"]) await core.createNamespace({ body: { metadata: { name } } });
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "sim", backend: "simulated" }),
  });
  writeFileSync(join(folder, "scheduler.yaml"), SCHEDULER_CONFIG);
});

afterAll(async () => {
  await world?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** `run` for provider `ops` on the world's API server, keeping state in `<folder>/<state>`. */
const runArgs = (state: string, ...more: string[]) =>
  engineRunArgs(
    {
      provider: "ops",
      environment: "test",
      kubeconfig: world.controlPlane.kubeconfigPath,
      stateDir: join(folder, state),
    },
    ...more,
  );

const SCHEDULER_CONFIG = `
scheduler:
  scope: Cluster
  strategy: Balanced
  purposeMappings:
    mcp:
      template:
        metadata: {namespace: fleet}
        spec: {profile: test.ops.sim, tenancy: Exclusive}
    workload:
      tenancyCount: 3
      template:
        metadata: {namespace: fleet}
        spec: {profile: test.ops.sim, tenancy: Shared}
`;

const aClusterMidProvisioning: KillNineCase = {
  kind: "Cluster",
  get args() {
    return runArgs("cluster", "--backend-option=delay=2s", "--log-level=debug");
  },
  create: async () => {
    await world.custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: "ops",
      body: aCluster({ name: "survivor", namespace: "ops", profile: "test.ops.sim", tenancy: "Exclusive" }),
    });
  },
  midway: async () => {
    await world.waitForObject<Cluster>(
      RESOURCES.Cluster,
      "survivor",
      (c) => c?.status?.providerStatus?.state === "provisioning",
      { namespace: "ops" },
    );
  },
  finished: async () => {
    const ready = await world.waitForObject<Cluster>(
      RESOURCES.Cluster,
      "survivor",
      (c) => c?.status?.phase === "Ready",
      {
        namespace: "ops",
      },
    );
    expect(ready?.status?.providerStatus).toMatchObject({ state: "ready" });
    const created = new SimulatedBackend({ stateDirectory: join(folder, "cluster", "simulated") })
      .createdTotal;
    expect(created).toBe(1);
  },
};

const REQUESTS = Array.from({ length: 30 }, (_, i) => `req-${i}`);

const clusterRequestsMidScheduling: KillNineCase = {
  kind: "ClusterRequest",
  get args() {
    return runArgs("requests", `--scheduler-config=${join(folder, "scheduler.yaml")}`);
  },
  create: async () => {
    for (const [i, name] of REQUESTS.entries()) {
      await world.custom.createNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: "teams",
        body: aClusterRequest({
          name,
          namespace: "teams",
          purpose: i % 3 === 0 ? "mcp" : "workload",
          // Generated names are the hard case: only the Cluster's finalizer and the grant find them again.
          ...(i % 6 === 0 ? { labels: { [CLUSTER_REQUEST_LABELS.randomizeClusterName]: "true" } } : {}),
        }),
      });
    }
  },
  // Kill it while it is scheduling: some requests granted, not all.
  midway: async () => {
    await eventually(
      async () =>
        (await world.list<ClusterRequest>(RESOURCES.ClusterRequest, "teams")).some(
          (r) => r.status?.phase === "Granted",
        ),
      { what: "the first grant", intervalMs: 20 },
    );
  },
  finished: async () => {
    const requests = await eventually(
      async () => {
        const all = await world.list<ClusterRequest>(RESOURCES.ClusterRequest, "teams");
        const granted = all.filter((r) => r.status?.phase === "Granted").map((r) => r.metadata.name);
        expect(granted.sort()).toEqual([...REQUESTS].sort());
        return all;
      },
      { what: "every request Granted after the restart", timeoutMs: 60_000 },
    );
    const clusters = await world.list<Cluster>(RESOURCES.Cluster, "fleet");
    const grants = await world.list<ClusterRequestGrant>(RESOURCES.ClusterRequestGrant, "teams");
    for (const request of requests) {
      const uid = request.metadata.uid ?? "";
      const holding = clusters.filter((cluster) => servedRequests(cluster).includes(uid));
      expect(holding, `Clusters serving ${request.metadata.name}`).toHaveLength(1);
      const grant = grants.find((g) => g.metadata.name === request.metadata.name);
      expect(grant?.spec).toMatchObject({
        requestUID: uid,
        clusterRef: { name: holding[0]?.metadata.name, namespace: "fleet" },
      });
      expect(request.status?.cluster).toEqual(grant?.spec.clusterRef);
    }
    // No orphan: every Cluster serves someone; Exclusive ones exactly one, Shared ones at most three.
    for (const cluster of clusters) {
      const served = servedRequests(cluster).length;
      expect(served, cluster.metadata.name).toBeGreaterThan(0);
      expect(served, cluster.metadata.name).toBeLessThanOrEqual(cluster.spec.tenancy === "Exclusive" ? 1 : 3);
    }
    expect(clusters.filter((c) => c.spec.tenancy === "Exclusive")).toHaveLength(10);
  },
};

describe("openmcp-engine run killed with kill -9 mid-way", () => {
  it.each([aClusterMidProvisioning, clusterRequestsMidScheduling])(
    "$kind: the restarted engine finishes the work, orders nothing twice and stops cleanly on SIGTERM",
    (scenario) => killNineMidway(scenario),
    120_000,
  );
});
