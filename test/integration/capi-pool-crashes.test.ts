/**
 * The `capi` backend's warm pools where a kill -9 cuts a step short, on a real API server: what each window leaves
 * (the backend's records, the CAPI Cluster's labels) is made by hand, and the next call must finish or undo it.
 * Cluster API's Cluster CRD is stood in by a schemaless one: no controller runs, so members never get Ready (the
 * pool kit and a bound member with Cluster API's own managers: capi-backend.conformance.heavy.test.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { PoolSupport } from "../../src/api/backend-contract.ts";
import { poolMemberTarget } from "../../src/api/cluster-pool.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { Patch } from "../../src/machines/shared/json-patch.ts";
import { type CapiBackend, createBackend } from "../../src/providers/capi.ts";
import { poolMemberClusterName } from "../../src/providers/capi-pool-members.ts";
import { CAPI_CLUSTERS } from "../../src/providers/capi-records.ts";
import {
  CAPI_BACKEND_KEYS,
  capiClusterName,
  type TopologyCluster,
} from "../../src/providers/capi-topology.ts";
import { aBackendContext } from "../support/backend-context.ts";
import { eventually } from "../support/eventually.ts";

const NS = "pool-crashes";
const settings = { clusterClass: { namespace: "classes", name: "in-memory" }, namespace: NS };
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
const folders: string[] = [];

beforeAll(async () => {
  controlPlane = await startControlPlane();
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await controlPlane.kubeConfig.makeApiClient(ApiextensionsV1Api).createCustomResourceDefinition({
    body: {
      metadata: { name: `${CAPI_CLUSTERS.plural}.${CAPI_CLUSTERS.group}` },
      spec: {
        group: CAPI_CLUSTERS.group,
        names: {
          kind: "Cluster",
          listKind: "ClusterList",
          plural: CAPI_CLUSTERS.plural,
          singular: "cluster",
        },
        scope: "Namespaced",
        versions: [
          {
            name: CAPI_CLUSTERS.version,
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: { type: "object", x_kubernetes_preserve_unknown_fields: true } },
          },
        ],
      },
    },
  });
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NS } } });
  await eventually(() => capiClusters().then(() => true), {
    what: "the Cluster CRD served",
    timeoutMs: 30_000,
  });
}, 120_000);

afterAll(async () => {
  await controlPlane?.stop();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function capiClusters(): Promise<TopologyCluster[]> {
  const list = (await custom.listNamespacedCustomObject({ ...CAPI_CLUSTERS, namespace: NS })) as {
    items: TopologyCluster[];
  };
  return list.items;
}

/** A backend on `stateDirectory` (default: a new, empty one). */
async function open(stateDirectory = mkdtempSync(join(tmpdir(), "capi-pool-crashes-"))) {
  folders.push(stateDirectory);
  const backend = (await createBackend(
    aBackendContext(stateDirectory, { kubeconfig: controlPlane.kubeconfigPath }),
  )) as CapiBackend;
  return { backend, pools: backend.pools, stateDirectory };
}

const memberOf = (id: string) => poolMemberTarget(id, { name: "capi", settings });
const clusterTarget = (n: number): ClusterTarget => ({
  uid: `00000000-0000-4000-8000-00000000000${n}`,
  namespace: "team-a",
  name: `cluster-${n}`,
  tenancy: "Exclusive",
  profile: "test.capi",
  providerConfig: "capi",
  settings,
});

/** The labels of member `id`'s CAPI Cluster put back as they were before its bind: the patch never landed. */
async function unbind(id: string): Promise<void> {
  const labels = CAPI_BACKEND_KEYS;
  await custom.patchNamespacedCustomObject(
    {
      ...CAPI_CLUSTERS,
      namespace: NS,
      name: poolMemberClusterName(id),
      body: [
        Patch.replace(["metadata", "labels", labels.clusterUidLabel], id),
        Patch.replace(["metadata", "labels", labels.clusterNamespaceLabel], "pool"),
        Patch.replace(["metadata", "labels", labels.clusterNameLabel], id),
      ],
    },
    setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
  );
}

/** Member `id` of `pool` made and bound to `cluster`, its bind's patch then undone: a bind recorded that never landed. */
async function bindCutShort(
  pools: PoolSupport,
  id: string,
  pool: string,
  cluster: ClusterTarget,
): Promise<void> {
  await pools.createMember({ id, pool, version: "1.36.3" }, memberOf(id));
  await pools.bind(id, cluster);
  await unbind(id);
}

describe("the capi backend's pools, cut short", () => {
  it("makes one CAPI Cluster per member however often it is asked, and lists it with its pool only", async () => {
    const { pools } = await open();
    const id = "pool-0000000000a1";
    await pools.createMember({ id, pool: "crash-a", version: "1.36.3" }, memberOf(id));
    await pools.createMember({ id, pool: "crash-a", version: "1.36.3" }, memberOf(id));
    expect((await capiClusters()).filter((c) => c.metadata.name === poolMemberClusterName(id))).toHaveLength(
      1,
    );
    expect(await pools.listMembers("crash-a")).toMatchObject([
      { id, pool: "crash-a", version: "1.36.3", observation: { exists: true, phase: "provisioning" } },
    ]);
    expect(await pools.listMembers("crash-other")).toEqual([]);
    await pools.deleteMember(id);
    await pools.deleteMember(id); // absent: succeeds
    expect(await capiClusters()).toEqual([]);
  });

  it("finishes a bind whose patch never landed, and serves nothing under the Cluster's uid meanwhile", async () => {
    const { pools, stateDirectory } = await open();
    const id = "pool-0000000000b1";
    const cluster = clusterTarget(1);
    // The record was written, the CAPI Cluster is still idle: as an engine that recorded first left it.
    await bindCutShort(pools, id, "crash-b", cluster);
    const restarted = await open(stateDirectory);
    expect((await restarted.backend.observe(cluster)).exists).toBe(false);
    expect(await restarted.pools.listMembers("crash-b")).toMatchObject([{ id }]);
    expect((await restarted.pools.listMembers("crash-b"))[0]).not.toHaveProperty("boundTo");
    await restarted.pools.bind(id, cluster); // the engine's claim makes it bind again
    expect(await restarted.backend.observe(cluster)).toMatchObject({ exists: true, phase: "provisioning" });
    expect(await restarted.pools.listMembers("crash-b")).toMatchObject([{ id, boundTo: cluster.uid }]);
    await expect(restarted.pools.bind(id, clusterTarget(2))).rejects.toThrow(
      `serves Cluster team-a/cluster-1 (uid ${cluster.uid}); Cluster team-a/cluster-2 cannot take it`,
    );
    await restarted.backend.delete(cluster);
    expect(await capiClusters()).toEqual([]);
    expect((await restarted.backend.observe(cluster)).exists).toBe(false);
    expect(await restarted.pools.listMembers("crash-b")).toEqual([]);
    expect(restarted.backend.clusterCount).toBe(0);
  });

  it("makes a Cluster its own CAPI Cluster when the member of a bind cut short went, the record not blocking it", async () => {
    const { backend, pools } = await open();
    const id = "pool-0000000000c1";
    const cluster = clusterTarget(3);
    await bindCutShort(pools, id, "crash-c", cluster);
    // The claim was released (its member lost), the member deleted by hand: the Cluster is made as usual.
    await custom.deleteNamespacedCustomObject({
      ...CAPI_CLUSTERS,
      namespace: NS,
      name: poolMemberClusterName(id),
    });
    await backend.create(cluster, "1.36.3");
    expect((await capiClusters()).map((c) => c.metadata.name)).toEqual([capiClusterName(cluster)]);
    expect(await backend.observe(cluster)).toMatchObject({ exists: true });
    await backend.delete(cluster);
    expect(await capiClusters()).toEqual([]);
  });

  it("refuses to bind a member that is not there, and deletes a bound member with the Cluster's record", async () => {
    const { backend, pools } = await open();
    await expect(pools.bind("pool-0000000000d0", clusterTarget(4))).rejects.toThrow(
      `capi backend: no pool member pool-0000000000d0 (no CAPI Cluster ${NS}/${poolMemberClusterName("pool-0000000000d0")} marked as one)`,
    );
    const id = "pool-0000000000d1";
    await pools.createMember({ id, pool: "crash-d", version: "1.36.3" }, memberOf(id));
    await pools.bind(id, clusterTarget(4));
    await pools.deleteMember(id); // its Cluster went before it held the member
    expect(await capiClusters()).toEqual([]);
    expect(backend.clusterCount).toBe(0);
  });
});
