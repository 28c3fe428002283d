/**
 * A warm pool of real kind clusters (contract 1.5) on a real Docker engine, served by the engine on a real
 * management API server: with a pool of 2, three Clusters created at once — two bound to the pool's kind clusters
 * (the time to Ready printed), the third made as a kind cluster of its own — and the pool back at 2. A bound
 * Cluster's admin access reaches its member's kind cluster; deleting it and the pool leaves no kind cluster.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterPool } from "../../src/api/cluster-pool.ts";
import { ANNOTATIONS, ENGINE_API_VERSION, RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { parsePoolMemberAnnotation } from "../../src/machines/cluster-pool/claim.ts";
import { createBackend, kindClusterName } from "../../src/providers/kind.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { installingCrds } from "../../src/runtime/install-crds.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { aCluster, aClusterTarget, aProviderConfig } from "../support/builders.ts";
import { containersNamed, containerToolchain, run } from "../support/containers.ts";
import { eventually, satisfying } from "../support/eventually.ts";

const NS = "kind-pool";
const PROFILE = "test.kind-pool.kind";
const tools = containerToolchain();
const stateDirectory = mkdtempSync(join(tmpdir(), "kind-pool-"));
const logLines: string[] = [];
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
let engine: Engine;
let backend: ClusterBackend;

const readCluster = async (name: string): Promise<Cluster | undefined> => {
  try {
    return (await custom.getNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name })) as Cluster;
  } catch (error) {
    if (error instanceof ApiException && error.code === 404) return undefined;
    throw error;
  }
};

const readPool = async (): Promise<ClusterPool | undefined> => {
  try {
    return (await custom.getClusterCustomObject({ ...RESOURCES.ClusterPool, name: "warm" })) as ClusterPool;
  } catch (error) {
    if (error instanceof ApiException && error.code === 404) return undefined;
    throw error;
  }
};

const poolAt = (idle: number) =>
  eventually(
    async () =>
      satisfying(
        await readPool(),
        (pool) => pool?.status?.idle === idle && pool.status.refilling === 0 && pool.status.binding === 0,
      ),
    { what: `pool warm with ${idle} idle kind cluster(s)`, timeoutMs: 480_000, intervalMs: 1_000 },
  ) as Promise<ClusterPool>;

/** The kind clusters this test's backend made (it names each one's folder after it). */
const madeHere = () => {
  const clusters = join(stateDirectory, "clusters");
  return existsSync(clusters) ? readdirSync(clusters) : [];
};

/** Creates a Cluster and measures, polling every 20 ms, how long until it says Ready. */
async function timeToReady(name: string): Promise<{ name: string; ms: number; cluster: Cluster }> {
  const started = performance.now();
  await custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: NS,
    body: aCluster({ name, namespace: NS, profile: PROFILE, tenancy: "Exclusive" }),
  });
  const cluster = (await eventually(
    async () => satisfying(await readCluster(name), (c) => c?.status?.phase === "Ready"),
    { what: `Cluster ${name} Ready`, timeoutMs: 480_000, intervalMs: 20 },
  )) as Cluster;
  return { name, ms: Math.round(performance.now() - started), cluster };
}

beforeAll(async () => {
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NS } } });
  backend = await createBackend({
    stateDirectory,
    // Two creates at once: this file holds the machine's kind-nodes lock, so no other file boots nodes beside it.
    options: { kind: tools.kind, docker: tools.docker, parallelCreates: "2" },
    log: createLogger({ write: (line) => logLines.push(line) }),
    clock: systemClock,
    readSecret: async () => undefined,
  });
  engine = new Engine({
    kubeConfig: controlPlane.kubeConfig,
    providerName: "kind-pool",
    environment: "test",
    backend,
    log: createLogger({ level: "debug", write: (line) => logLines.push(line) }),
    kindSettings: { Cluster: { pools: true } },
  });
  await engine.start();
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({
      name: "kind",
      backend: "kind",
      providerRef: { name: "kind-pool" },
      supportedVersions: [{ version: tools.kubernetesVersion }],
    }),
  });
  await custom.createClusterCustomObject({
    ...RESOURCES.ClusterPool,
    body: {
      apiVersion: ENGINE_API_VERSION,
      kind: "ClusterPool",
      metadata: { name: "warm" },
      spec: { providerConfig: "kind", idle: 2 },
    },
  });
}, 300_000);

afterAll(async () => {
  await engine?.stop();
  await controlPlane?.stop();
  for (const name of madeHere()) await run(tools.kind, ["delete", "cluster", "--name", name]).catch(() => {});
  rmSync(stateDirectory, { recursive: true, force: true });
}, 300_000);

describe("a warm pool of 2 real kind clusters", { timeout: 900_000 }, () => {
  it("serves two of three Clusters created at once, makes the third a kind cluster of its own, and refills to 2", async () => {
    const warm = await poolAt(2);
    const warmIds = (warm.status?.members ?? []).map((member) => member.id).sort();
    const results = await Promise.all(["one", "two", "three"].map((name) => timeToReady(name)));
    const memberOf = (cluster: Cluster) => {
      const annotation = cluster.metadata.annotations?.[ANNOTATIONS.poolMember];
      return annotation === undefined ? undefined : parsePoolMemberAnnotation(annotation).member;
    };
    console.log(
      `kind: time from creation to Ready: ${results
        .map((r) => `${r.name} ${r.ms} ms (${memberOf(r.cluster) ? "pool" : "made"})`)
        .join(", ")}`,
    );
    const fromPool = results.filter((r) => memberOf(r.cluster));
    const made = results.filter((r) => !memberOf(r.cluster));
    expect(fromPool.map((r) => memberOf(r.cluster)).sort()).toEqual(warmIds);
    expect(made).toHaveLength(1);

    // A bound Cluster's admin access reaches its member's kind cluster: its node is that cluster's node.
    for (const { cluster } of fromPool) {
      const target = aClusterTarget({
        uid: cluster.metadata.uid ?? "",
        namespace: NS,
        name: cluster.metadata.name ?? "",
        profile: PROFILE,
        providerConfig: "kind",
      });
      const admin = new KubeConfig();
      admin.loadFromString((await backend.adminAccess(target))?.kubeconfig ?? "");
      const nodes = await admin.makeApiClient(CoreV1Api).listNode();
      expect(nodes.items.map((node) => node.metadata?.name)).toEqual([
        `${kindClusterName(memberOf(cluster) ?? "")}-control-plane`,
      ]);
    }
    // The third is a kind cluster of its own, named from its uid.
    const own = kindClusterName(made[0]?.cluster.metadata.uid ?? "");
    expect(await containersNamed(own)).toEqual([`${own}-control-plane`]);

    const refilled = await poolAt(2);
    const refillIds = (refilled.status?.members ?? []).map((member) => member.id);
    expect(refillIds.filter((id) => warmIds.includes(id))).toEqual([]);
    // Five kind clusters in all: two bound, one made, two idle again.
    expect(madeHere()).toHaveLength(5);
  });

  it("deletes a bound Cluster's kind cluster with it, and the idle ones with the pool: no kind cluster left", async () => {
    for (const name of ["one", "two", "three"])
      await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NS, name });
    await custom.deleteClusterCustomObject({ ...RESOURCES.ClusterPool, name: "warm" });
    await eventually(
      async () => {
        const left = await Promise.all(["one", "two", "three"].map(readCluster));
        return satisfying(
          { clusters: left.filter(Boolean).length, pool: await readPool(), folders: madeHere() },
          (state) => state.clusters === 0 && state.pool === undefined && state.folders.length === 0,
        );
      },
      { what: "Clusters, pool and kind clusters gone", timeoutMs: 300_000, intervalMs: 1_000 },
    );
    const listed = (await run(tools.kind, ["get", "clusters"])).split("\n");
    expect(listed.filter((name) => name.startsWith("omc-"))).toEqual([]);
    expect(logLines.join("\n")).not.toMatch(/BEGIN CERTIFICATE|client-key-data|eyJhbGci/);
  });
});
