/**
 * A warm pool of real kind clusters (contract 1.5) on a real Docker engine, served by the engine on a real
 * management API server: with a pool of 2, three Clusters created at once — two bound to the pool's kind clusters
 * (the time to Ready printed), the third made as a kind cluster of its own — and the pool back at 2. A bound
 * Cluster's admin access reaches its member's kind cluster; deleting it and the pool leaves no kind cluster.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBackend } from "../../src/providers/kind/index.ts";
import { kindClusterName, kindClusterNameOf } from "../../src/providers/kind/names.ts";
import { aProviderConfig } from "../support/builders.ts";
import { containersNamed, containerToolchain, run } from "../support/containers.ts";
import { deleteKindClusters, kindClustersMadeIn } from "../support/kind-engine-world.ts";
import {
  adminOf,
  deleteAll,
  poolMemberOf,
  type RunningPoolWorld,
  startPoolWorld,
  threeAtOnce,
} from "../support/pool-burst.ts";

const NS = "kind-pool";
const PROFILE = "test.kind-pool.kind";
const tools = containerToolchain();
const stateDirectory = mkdtempSync(join(tmpdir(), "kind-pool-"));
let world: RunningPoolWorld;

/** Every kind cluster this test's backend was seen to make, deleted ones too: other files make kind clusters too. */
const everMade = new Set<string>();
/** The kind clusters this test's backend made and has not deleted. */
const madeHere = () => {
  const names = kindClustersMadeIn(stateDirectory);
  for (const name of names) everMade.add(name);
  return names;
};

beforeAll(async () => {
  world = await startPoolWorld({
    namespace: NS,
    profile: PROFILE,
    patienceMs: 480_000,
    providerName: "kind-pool",
    providerConfig: aProviderConfig({
      name: "kind",
      backend: "kind",
      providerRef: { name: "kind-pool" },
      supportedVersions: [{ version: tools.kubernetesVersion }],
    }),
    factory: createBackend,
    stateDirectory,
    // Two creates at once: this file holds the machine's kind-nodes lock, so no other file boots nodes beside it.
    options: { kind: tools.kind, docker: tools.docker, parallelCreates: "2" },
  });
}, 300_000);

afterAll(async () => {
  await world?.stop();
  await deleteKindClusters(madeHere());
  rmSync(stateDirectory, { recursive: true, force: true });
}, 300_000);

describe("a warm pool of 2 real kind clusters", { timeout: 900_000 }, () => {
  it("serves two of three Clusters created at once, makes the third a kind cluster of its own, and refills to 2", async () => {
    const { fromPool, made } = await threeAtOnce(world, "kind");

    // A bound Cluster's admin access reaches its member's kind cluster: its node is that cluster's node.
    for (const { cluster } of fromPool) {
      const admin = await adminOf(world, cluster);
      const nodes = await admin.makeApiClient(CoreV1Api).listNode();
      expect(nodes.items.map((node) => node.metadata?.name)).toEqual([
        `${kindClusterName(poolMemberOf(cluster) ?? "")}-control-plane`,
      ]);
    }
    // The third is a kind cluster of its own, named from its name and uid.
    const own = kindClusterNameOf(made.cluster.metadata.name ?? "", made.cluster.metadata.uid ?? "");
    expect(await containersNamed(own)).toEqual([`${own}-control-plane`]);

    // Five kind clusters in all: two bound, one made, two idle again.
    expect(madeHere()).toHaveLength(5);
  });

  it("deletes a bound Cluster's kind cluster with it, and the idle ones with the pool: no kind cluster left", async () => {
    await deleteAll(world, () => madeHere().length === 0);
    const listed = (await run(tools.kind, ["get", "clusters"])).split("\n");
    expect(everMade.size).toBeGreaterThanOrEqual(5);
    expect(listed.filter((name) => everMade.has(name))).toEqual([]);
    expect(world.logLines.join("\n")).not.toMatch(/BEGIN CERTIFICATE|client-key-data|eyJhbGci/);
  });
});
