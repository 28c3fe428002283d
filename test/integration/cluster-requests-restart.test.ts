import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterRequest } from "../../src/api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../src/api/cluster-request-grant.ts";
import { LABELS, RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { servedRequests } from "../../src/machines/cluster-request/cluster-claims.ts";
import { installingCrds } from "../../src/runtime/install-crds.ts";
import { aClusterRequest, aProviderConfig } from "../support/builders.ts";
import { eventually } from "../support/eventually.ts";
import { startEngineCli } from "../support/processes.ts";

const folder = mkdtempSync(join(tmpdir(), "scheduler-restart-"));
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;

const CONFIG = `
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

beforeAll(async () => {
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ["fleet", "teams"]) await core.createNamespace({ body: { metadata: { name } } });
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "sim", backend: "simulated" }),
  });
  writeFileSync(join(folder, "scheduler.yaml"), CONFIG);
});

afterAll(async () => {
  await controlPlane?.stop();
  rmSync(folder, { recursive: true, force: true });
});

function startRun() {
  return startEngineCli([
    "run",
    "--provider-name=ops",
    "--environment=test",
    `--kubeconfig=${controlPlane.kubeconfigPath}`,
    `--state-dir=${join(folder, "state")}`,
    `--scheduler-config=${join(folder, "scheduler.yaml")}`,
    "--metrics-bind-address=0",
    "--health-probe-bind-address=0",
  ]);
}

async function list<T>(
  resource: (typeof RESOURCES)[keyof typeof RESOURCES],
  namespace: string,
): Promise<T[]> {
  return ((await custom.listNamespacedCustomObject({ ...resource, namespace })) as { items: T[] }).items;
}

describe("the scheduler killed with kill -9 mid-scheduling", () => {
  it("makes no Cluster twice and loses no grant after the restart", async () => {
    const first = startRun();
    const names: string[] = [];
    for (let i = 0; i < 30; i++) {
      const purpose = i % 3 === 0 ? "mcp" : "workload";
      const name = `req-${i}`;
      names.push(name);
      await custom.createNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: "teams",
        body: aClusterRequest({
          name,
          namespace: "teams",
          purpose,
          // Generated names are the hard case: only the Cluster's finalizer and the grant find them again.
          ...(i % 6 === 0 ? { labels: { [LABELS.randomizeClusterName]: "true" } } : {}),
        }),
      });
    }
    // Kill it while it is scheduling: some requests granted, not all.
    await eventually(
      async () => {
        const granted = (await list<ClusterRequest>(RESOURCES.ClusterRequest, "teams")).filter(
          (r) => r.status?.phase === "Granted",
        ).length;
        return granted >= 1;
      },
      { what: "the first grant", intervalMs: 20 },
    );
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = startRun();
    try {
      const requests = await eventually(
        async () => {
          const all = await list<ClusterRequest>(RESOURCES.ClusterRequest, "teams");
          expect(
            all
              .filter((r) => r.status?.phase === "Granted")
              .map((r) => r.metadata.name)
              .sort(),
          ).toEqual([...names].sort());
          return all;
        },
        { what: "every request Granted after the restart", timeoutMs: 60_000 },
      );
      const clusters = await list<Cluster>(RESOURCES.Cluster, "fleet");
      const grants = await list<ClusterRequestGrant>(RESOURCES.ClusterRequestGrant, "teams");
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
        expect(served, cluster.metadata.name).toBeLessThanOrEqual(
          cluster.spec.tenancy === "Exclusive" ? 1 : 3,
        );
      }
      expect(clusters.filter((c) => c.spec.tenancy === "Exclusive")).toHaveLength(10);
    } finally {
      second.child.kill("SIGKILL");
    }
  }, 120_000);
});
