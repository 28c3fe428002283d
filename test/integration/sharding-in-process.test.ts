/**
 * Two sharded engines in one process on a real API server: they find each other through their
 * membership Leases, split the Clusters with no Cluster reconciled by both, and when one stops
 * gracefully the other takes its Clusters at once. (Separate processes, kill -9 and a partition:
 * sharding.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHARD_LEASE_LABELS } from "../../src/api/constants/shard-lease.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { explainReport, formatReport } from "../../src/cli/explain.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import type { Engine } from "../../src/runtime/engine.ts";
import { LEASES, type Lease } from "../../src/runtime/leadership/lease.ts";
import { eventually } from "../support/eventually.ts";
import { sample } from "../support/prometheus-text.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

const TIMING = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };

let world: World;
/** Which engine reconciled each Cluster. */
const reconciledBy = new Map<string, Set<string>>();
const engines = new Map<string, Engine>();

/** Starts engine `name` on the world, its shard ring shared with the others. */
async function startEngine(name: string): Promise<void> {
  const engine = await world.startEngine({
    sharding: { namespace: "default", identity: name, timing: TIMING },
    onReconciled: (kind, key) => {
      if (kind !== "Cluster") return;
      const by = reconciledBy.get(key) ?? new Set();
      by.add(name);
      reconciledBy.set(key, by);
    },
    recordEvents: false,
  });
  engines.set(name, engine);
}

beforeAll(async () => {
  world = await startWorld({ backend: new SimulatedBackend({ provisionDelayMs: 0 }), engine: false });
  await Promise.all(["alpha", "beta"].map(startEngine));
});

afterAll(async () => {
  await world?.stop(); // stops every engine still running (and again, harmlessly, one a test stopped)
});

const names = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe("two sharded engines", () => {
  it("see each other, split 40 Clusters between them with none reconciled by both", async () => {
    await eventually(
      () => {
        for (const engine of engines.values()) {
          expect(engine.shards?.view.members).toEqual(["alpha", "beta"]);
          expect(engine.shards?.view.acknowledged).toEqual(["alpha", "beta"]);
        }
      },
      { what: "both engines to acknowledge both", timeoutMs: 15_000 },
    );
    for (const name of names("split", 40)) await world.createCluster(name);
    for (const name of names("split", 40)) await world.waitFor(name, isReady, 60_000);

    const byEngine = new Map<string, number>();
    for (const name of names("split", 40)) {
      const by = [...(reconciledBy.get(`${world.namespace}/${name}`) ?? [])];
      expect(by, `engines that reconciled ${name}`).toHaveLength(1);
      byEngine.set(by[0] as string, (byEngine.get(by[0] as string) ?? 0) + 1);
      // The one that reconciled it is the one the ring gives it to.
      expect(engines.get(by[0] as string)?.shards?.ownerOf(`${world.namespace}/${name}`)).toBe(by[0]);
    }
    expect([...byEngine.keys()].sort()).toEqual(["alpha", "beta"]);
    // Each replica's /metrics says how many it owns; together they own all 40.
    let owned = 0;
    for (const engine of engines.values()) {
      const text = await engine.metrics.registry.metrics();
      owned += sample(text, "openmcp_engine_shard_owned_objects", { controller: "cluster" });
      expect(text).toContain('openmcp_engine_shard_members{identity="alpha"');
      expect(text).toContain('openmcp_engine_shard_members{identity="beta"');
    }
    expect(owned).toBe(40);

    // `explain` names the owner from the membership Leases alone.
    const report = await explainReport(world.controlPlane.kubeConfig, "Cluster", world.namespace, "split-0");
    const owner = engines.get("alpha")?.shards?.ownerOf(`${world.namespace}/split-0`);
    expect(report.replica).toEqual({ owner, live: 2 });
    expect(formatReport(report)).toContain(`Replica:      ${owner}  (sharded: 2 live replicas)`);
  }, 90_000);

  it("hand a stopped engine's Clusters to the other at once, without waiting for its Lease to expire", async () => {
    const beta = engines.get("beta") as Engine;
    const betas = names("split", 40).filter(
      (name) => beta.shards?.ownerOf(`${world.namespace}/${name}`) === "beta",
    );
    expect(betas.length).toBeGreaterThan(0);
    await beta.stop();
    engines.delete("beta");
    // Released, not left to expire: its Lease is gone, so alpha need not wait a lease duration.
    const leases = (await world.custom.listNamespacedCustomObject({
      ...LEASES,
      namespace: "default",
      labelSelector: `${SHARD_LEASE_LABELS.shardRing}=${world.provider}`,
    })) as { items: Lease[] };
    expect(leases.items.map((lease) => lease.spec?.holderIdentity)).toEqual(["alpha"]);
    // Deleting one of beta's Clusters: alpha has to take it over to remove our finalizer.
    const victim = betas[0] as string;
    await world.custom.deleteNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: world.namespace,
      name: victim,
    });
    await world.waitFor(victim, (cluster) => cluster === undefined, 30_000);
    expect(reconciledBy.get(`${world.namespace}/${victim}`)).toEqual(new Set(["alpha", "beta"]));
    expect(engines.get("alpha")?.shards?.view.members).toEqual(["alpha"]);
  }, 60_000);
});
