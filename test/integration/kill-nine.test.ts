/**
 * `openmcp-engine run` killed with kill -9 mid-way, for each kind a run drives on an API server alone: a
 * Cluster mid-provisioning (exactly one backend create), ClusterRequests mid-scheduling (no Cluster made
 * twice, no grant lost), a Rollout mid-run (every Cluster asked once, the run finished by the second engine). The EngineCluster's case needs Cluster API's manager: capi-provider.heavy.test.ts.
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
import { CHANGED_BY_ROLLOUT_ANNOTATION, ROLLOUT_RESOURCE } from "../../src/api/constants/rollout.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { Rollout } from "../../src/api/rollout.ts";
import { servedRequests } from "../../src/machines/cluster-request/cluster-claims.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { aCluster, aClusterRequest, aProviderConfig } from "../support/builders.ts";
import { eventually, satisfying } from "../support/eventually.ts";
import { type KillNineCase, killNineMidway } from "../support/kill-nine.ts";
import { engineRunArgs } from "../support/processes.ts";
import { startWorld, type World } from "../support/world.ts";

let world: World;
/** Every `--state-dir` and configuration of this file: a temporary folder, never the repository's `.state/`. */
const folder = mkdtempSync(join(tmpdir(), "kill-nine-"));

beforeAll(async () => {
  world = await startWorld({ engine: false });
  const core = world.controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ["ops", "fleet", "teams", "waves"])
    await core.createNamespace({ body: { metadata: { name } } });
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

const WAVE = Array.from({ length: 20 }, (_, i) => `w${String(i).padStart(2, "0")}`);

const readWaves = async () =>
  (await world.custom.getNamespacedCustomObject({
    ...ROLLOUT_RESOURCE,
    namespace: "waves",
    name: "waves",
  })) as Rollout;

const aRolloutMidRun: KillNineCase = {
  kind: "Rollout",
  get args() {
    return runArgs("rollout", "--backend-option=provisionDelay=0s", "--backend-option=updateDelay=1s");
  },
  create: async () => {
    for (const name of WAVE) {
      await world.custom.createNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: "waves",
        body: {
          ...aCluster({ name, namespace: "waves", profile: "test.ops.sim", tenancy: "Exclusive" }),
          spec: { profile: "test.ops.sim", tenancy: "Exclusive", kubernetes: { version: "1.33.6" } },
        },
      });
    }
    await eventually(
      async () =>
        (await world.list<Cluster>(RESOURCES.Cluster, "waves")).filter((c) => c.status?.phase === "Ready")
          .length === WAVE.length,
      { what: "the wave's Clusters Ready", timeoutMs: 60_000 },
    );
    await world.custom.createNamespacedCustomObject({
      ...ROLLOUT_RESOURCE,
      namespace: "waves",
      body: {
        apiVersion: "engine.openmcp.cloud/v1alpha1",
        kind: "Rollout",
        metadata: { name: "waves" },
        spec: { version: "1.34.2", maxUnavailable: 3, stages: [{ name: "rest", share: 100 }] },
      },
    });
  },
  // Kill it mid-run: some Clusters done, most not.
  midway: async () => {
    await eventually(
      async () => {
        const done = (await readWaves()).status?.stages?.find((stage) => stage.name === "rest")?.done ?? 0;
        return done >= 3;
      },
      { what: "three Clusters of the stage done", intervalMs: 50, timeoutMs: 60_000 },
    );
  },
  finished: async () => {
    const rollout = await eventually(
      async () => satisfying(await readWaves(), (current) => current.status?.phase === "Succeeded"),
      { what: "the rollout Succeeded after the restart", timeoutMs: 90_000 },
    );
    const clusters = await world.list<Cluster>(RESOURCES.Cluster, "waves");
    for (const cluster of clusters) {
      expect(cluster.spec.kubernetes?.version).toBe("1.34.2");
      // One spec change each: a second write of the version would be a second generation only if it differed,
      // so the Events (each names the Clusters it asked) say it too.
      expect(cluster.metadata.generation, cluster.metadata.name).toBe(2);
      expect(cluster.metadata.annotations?.[CHANGED_BY_ROLLOUT_ANNOTATION]).toBe(
        `waves/${rollout?.metadata.uid}`,
      );
    }
    const events = await world.controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedEvent({ namespace: "waves", fieldSelector: "involvedObject.name=waves" });
    const asked = events.items
      .filter((event) => event.reason === "ClustersChanged")
      .flatMap((event) => (event.message ?? "").replace(/^.*: /, "").split(", "));
    expect(asked.length, "Clusters asked, as the Events tell").toBeGreaterThan(0);
    expect(new Set(asked).size, `each asked once: ${asked.join(" ")}`).toBe(asked.length);
  },
};

describe("openmcp-engine run killed with kill -9 mid-way", () => {
  it.each([aClusterMidProvisioning, clusterRequestsMidScheduling, aRolloutMidRun])(
    "$kind: the restarted engine finishes the work, orders nothing twice and stops cleanly on SIGTERM",
    (scenario) => killNineMidway(scenario),
    120_000,
  );
});
