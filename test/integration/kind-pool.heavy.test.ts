/**
 * A warm pool of real kind clusters (contract 1.5) on a real Docker engine, served by the engine on a real
 * management API server: with a pool of 1, two Clusters created at once — one bound to the pool's kind cluster
 * (the time to Ready printed), the other made as a kind cluster of its own — and the pool back at 1. A bound
 * Cluster's admin access reaches its member's kind cluster; deleting it and the pool leaves no kind cluster.
 * (local-pool.test.ts plays the same with a pool of 2 on local clusters, where a cluster takes seconds.)
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
  burstOfOneMore,
  deleteAll,
  poolMemberOf,
  type RunningPoolWorld,
  startPoolWorld,
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
    size: 1,
    // One node boots at a time, as in the files beside it (the made Cluster and the refill wait for each other).
    options: { kind: tools.kind, docker: tools.docker, parallelCreates: "1" },
  });
}, 300_000);

afterAll(async () => {
  await world?.stop();
  await deleteKindClusters(madeHere());
  rmSync(stateDirectory, { recursive: true, force: true });
}, 300_000);

describe("a warm pool of a real kind cluster", { timeout: 900_000 }, () => {
  it("serves one of two Clusters created at once, makes the other a kind cluster of its own, and refills to 1", async () => {
    const { fromPool, made } = await burstOfOneMore(world, "kind");

    // A bound Cluster's admin access reaches its member's kind cluster: its node is that cluster's node.
    for (const { cluster } of fromPool) {
      const admin = await adminOf(world, cluster);
      const nodes = await admin.makeApiClient(CoreV1Api).listNode();
      expect(nodes.items.map((node) => node.metadata?.name)).toEqual([
        `${kindClusterName(poolMemberOf(cluster) ?? "")}-control-plane`,
      ]);
    }
    // The other is a kind cluster of its own, named from its name and uid.
    const own = kindClusterNameOf(made.cluster.metadata.name ?? "", made.cluster.metadata.uid ?? "");
    expect(await containersNamed(own)).toEqual([`${own}-control-plane`]);

    // Three kind clusters in all: one bound, one made, one idle again.
    expect(fromPool).toHaveLength(1);
    expect(madeHere()).toHaveLength(3);
  });

  it("deletes a bound Cluster's kind cluster with it, and the idle ones with the pool: no kind cluster left", async () => {
    await deleteAll(world, () => madeHere().length === 0);
    const listed = (await run(tools.kind, ["get", "clusters"])).split("\n");
    expect(everMade.size).toBeGreaterThanOrEqual(3);
    expect(listed.filter((name) => everMade.has(name))).toEqual([]);
    expect(world.logLines.join("\n")).not.toMatch(/BEGIN CERTIFICATE|client-key-data|eyJhbGci/);
  });
});
