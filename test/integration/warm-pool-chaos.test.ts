/**
 * Warm pools under chaos with real processes: `openmcp-engine run --warm-pools` on the `local` backend (each
 * cluster a real etcd + kube-apiserver, detached, outliving the engine) is killed with SIGKILL at random moments
 * (seeded; the seed is printed, `WARM_POOL_CHAOS_SEED=<n>` replays its draws) and restarted on the same state
 * folder, while a ClusterPool of 2 fills and refills and Clusters are created, some at once (the kill then comes
 * a seeded moment after the engine's first claim, while Clusters claim, bind and take hold). Then it settles: every Cluster
 * Ready, no pooled cluster serves two Clusters, none leaked (each is a Cluster's or an idle one of the pool, and
 * the pool is back at 2), no control plane folder or process without its record, no Cluster made twice.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import type { ClusterPool } from "../../src/api/cluster-pool.ts";
import { CLUSTER_FINALIZERS } from "../../src/api/constants/cluster.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../src/api/constants/cluster-pool.ts";
import { ENGINE_API_VERSION, RESOURCES } from "../../src/api/constants.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { findKubeAssets, kubeAssetVersions } from "../../src/controlplane/kube-assets.ts";
import {
  inspectPersistentControlPlane,
  removeAbandonedControlPlanes,
  stopPersistentControlPlane,
} from "../../src/controlplane/persistent-control-plane.ts";
import { parsePoolMemberAnnotation } from "../../src/machines/cluster-pool/claim.ts";
import { LocalBackend } from "../../src/providers/local.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { startApiServerWith } from "../support/cluster-harness.ts";
import { eventually } from "../support/eventually.ts";
import { engineRunArgs, processesMentioning, startEngineCli } from "../support/processes.ts";

const NAMESPACE = "chaos";
const PROVIDER = "chaos";
const POOL = "warm";
const IDLE = 2;
/** Clusters created at once, wave by wave; a wave waits for an idle pooled cluster, so binding happens. */
const WAVES = [3, 2, 1];
/** Kills at least, and at least this many after the last wave (the refills). */
const KILLS = 8;
const KILLS_AFTER_LAST_WAVE = 3;
/** Only a bound: the pool fills through the kills (its control planes outlive them), so the waves come early. */
const MOST_LIVES = 40;

const seed = Number(process.env.WARM_POOL_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const folder = mkdtempSync(join(tmpdir(), "warm-pool-chaos-"));
const stateDir = join(folder, "state");
/** The `local` backend's folder under the engine's state folder, and its clusters' folders. */
const backendDir = join(stateDir, "local");
const clustersDir = join(backendDir, "clusters");
const assets = findKubeAssets();
const version = kubeAssetVersions(assets).kubernetes.replace(/^v/, "");

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
let engine: ReturnType<typeof startEngineCli> | undefined;
/** Everything every engine printed, life by life. */
const outputs: string[] = [];

/** mulberry32: a small seeded generator, so one seed replays one schedule of kills and waves. */
function seeded(start: number): (low: number, high: number) => number {
  let state = start >>> 0;
  return (low, high) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    return Math.floor(low + unit * (high - low));
  };
}

const args = () =>
  engineRunArgs(
    { provider: PROVIDER, environment: "test", kubeconfig: controlPlane.kubeconfigPath, stateDir },
    "--warm-pools",
  );

const running = (child: ReturnType<typeof startEngineCli>["child"]) =>
  child.exitCode === null && child.signalCode === null;
const exited = (child: ReturnType<typeof startEngineCli>["child"]) =>
  running(child) ? new Promise((resolve) => child.once("exit", resolve)) : Promise.resolve();

/** Starts an engine and waits until it says it works (its caches synced), so every life does some work. */
async function startEngine(): Promise<ReturnType<typeof startEngineCli>> {
  const started = startEngineCli(args());
  engine = started;
  await eventually(
    () => {
      if (!running(started.child)) throw new Error(`the engine exited:\n${started.output().slice(-3_000)}`);
      return started.output().includes('"msg":"engine started"');
    },
    { what: "the engine started", timeoutMs: 60_000, intervalMs: 50 },
  );
  return started;
}

async function killEngine(): Promise<void> {
  const current = engine;
  if (!current) return;
  // An engine that ended on its own under chaos is a crash to see, not one to kill.
  expect(running(current.child), current.output().slice(-3_000)).toBe(true);
  current.child.kill("SIGKILL");
  await exited(current.child);
  outputs.push(current.output());
}

const readPool = async () =>
  (await custom.getClusterCustomObject({ ...RESOURCES.ClusterPool, name: POOL })) as ClusterPool;
const listClusters = async () =>
  (
    (await custom.listNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NAMESPACE })) as {
      items: Cluster[];
    }
  ).items;
const createCluster = (name: string) =>
  custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: NAMESPACE,
    body: aCluster({ name, namespace: NAMESPACE, profile: `test.${PROVIDER}.local`, tenancy: "Exclusive" }),
  });

/** What a kill hit, read from the pool's members and the Clusters just before it. */
interface KillMoment {
  readonly life: number;
  readonly afterMs: number;
  /** Members claimed by a Cluster, not yet let go of by the pool (the Cluster binds or holds it). */
  readonly claimed: number;
  readonly idle: number;
  /** Members not claimed and not Ready: being made. */
  readonly refilling: number;
  /** Clusters without our finalizer yet: not made, nor holding a bound member. */
  readonly unheld: number;
  /** Clusters not Ready yet. */
  readonly unready: number;
}

beforeAll(async () => {
  console.log(`warm-pool chaos seed ${seed} (replay: WARM_POOL_CHAOS_SEED=${seed})`);
  ({ controlPlane, custom } = await startApiServerWith(NAMESPACE));
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "local", backend: "local" }),
  });
  await custom.createClusterCustomObject({
    ...RESOURCES.ClusterPool,
    body: {
      apiVersion: ENGINE_API_VERSION,
      kind: "ClusterPool",
      metadata: { name: POOL },
      spec: { providerConfig: "local", idle: IDLE },
    },
  });
}, 120_000);

afterAll(async () => {
  if (engine && running(engine.child)) engine.child.kill("SIGKILL");
  if (engine) await exited(engine.child);
  // The control planes outlive the engine by design: stop each from its record, then any process left without one.
  await removeAbandonedControlPlanes(clustersDir).catch(() => []);
  for (const name of existsSync(clustersDir) ? readdirSync(clustersDir) : []) {
    // Bounded: a folder whose lock cannot be had is left to the sweep below, not to the hook's timeout.
    await Promise.race([
      stopPersistentControlPlane(join(clustersDir, name), { remove: true }).catch(() => {}),
      sleep(20_000),
    ]);
  }
  for (const pid of processesMentioning(clustersDir)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  await controlPlane?.stop();
  rmSync(folder, { recursive: true, force: true });
}, 180_000);

describe("a warm pool of 2 on real control planes, its engine killed with kill -9 at random moments", () => {
  it("ends with every Cluster Ready on a pooled or made cluster of its own, nothing leaked, nothing doubled", async () => {
    const random = seeded(seed);
    const began = Date.now();
    const kills: KillMoment[] = [];
    const created: string[] = [];
    let wave = 0;
    let killsAfterLastWave = 0;
    for (let life = 0; life < MOST_LIVES; life++) {
      if (wave >= WAVES.length && kills.length >= KILLS && killsAfterLastWave >= KILLS_AFTER_LAST_WAVE) break;
      const current = await startEngine();
      const lifeBegan = Date.now();
      // Idle members counted from the members: a claim changes them at once, the counters only at the pool's next write.
      const idleNow = ((await readPool()).status?.members ?? []).filter(
        (member) => !member.claimedBy && member.phase === "Ready",
      ).length;
      if (wave < WAVES.length && idleNow > 0) {
        // A wave, and the kill a seeded moment after the engine's first claim: between claim, bind and hold.
        await sleep(random(0, 1_500));
        const names = Array.from({ length: WAVES[wave] ?? 0 }, (_, i) => `w${wave}-${i}`);
        await Promise.all(names.map(createCluster));
        created.push(...names);
        console.log(`life ${life}: created ${names.join(", ")} at once (${idleNow} idle)`);
        wave++;
        await eventually(() => current.output().includes('"msg":"pool cluster claimed"'), {
          what: "a claim",
          timeoutMs: 3_000,
          intervalMs: 10,
        }).catch(() => undefined); // none (a wave larger than the idle clusters left): killed all the same
        await sleep(random(0, 250));
      } else {
        await sleep(random(1_000, 6_000));
      }
      const [pool, clusters] = await Promise.all([readPool(), listClusters()]);
      const members = pool.status?.members ?? [];
      const moment: KillMoment = {
        life,
        afterMs: Date.now() - lifeBegan,
        claimed: members.filter((member) => member.claimedBy).length,
        idle: members.filter((member) => !member.claimedBy && member.phase === "Ready").length,
        refilling: members.filter((member) => !member.claimedBy && member.phase !== "Ready").length,
        unheld: clusters.filter(
          (cluster) => !cluster.metadata.finalizers?.includes(CLUSTER_FINALIZERS.cluster),
        ).length,
        unready: clusters.filter((cluster) => cluster.status?.phase !== "Ready").length,
      };
      await killEngine();
      kills.push(moment);
      if (wave >= WAVES.length) killsAfterLastWave++;
      console.log(
        `kill ${kills.length} (life ${life}, ${moment.afterMs} ms after its start): pool members claimed ${moment.claimed}, idle ${moment.idle}, refilling ${moment.refilling}; Clusters not holding ${moment.unheld}, not Ready ${moment.unready}`,
      );
    }
    expect(wave, "every wave of Clusters was created").toBe(WAVES.length);

    const last = await startEngine();
    const settled = await eventually(
      async () => {
        const clusters = await listClusters();
        expect(clusters.map((cluster) => cluster.metadata.name).sort()).toEqual([...created].sort());
        for (const cluster of clusters) expect(cluster.status?.phase, cluster.metadata.name).toBe("Ready");
        const pool = await readPool();
        expect(pool.status).toMatchObject({ idle: IDLE, binding: 0, refilling: 0 });
        return { clusters, pool };
      },
      { what: "every Cluster Ready and the pool back at 2 idle", timeoutMs: 240_000, intervalMs: 1_000 },
    ).catch((error: unknown) => {
      console.log(`the last engine's output:\n${last.output().slice(-6_000)}`);
      throw error;
    });
    const settledAfterMs = Date.now() - began;
    // A stop after the chaos is a clean one; and nothing moves while the invariants are read.
    last.child.kill("SIGTERM");
    await exited(last.child);
    outputs.push(last.output());
    expect(last.child.exitCode, last.output().slice(-3_000)).toBe(0);
    expect(outputs.join("")).not.toMatch(/BEGIN (CERTIFICATE|PRIVATE KEY)|client-key-data|token/i);

    const { clusters, pool } = settled;
    const byUid = new Map(clusters.map((cluster) => [cluster.metadata.uid ?? "", cluster]));
    const annotated = clusters.flatMap((cluster) => {
      const value = cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember];
      return value === undefined ? [] : [{ cluster, ...parsePoolMemberAnnotation(value) }];
    });
    // No two Clusters on one pooled cluster, in the API.
    expect(new Set(annotated.map((entry) => entry.member)).size).toBe(annotated.length);

    // At the backend, as a fresh instance on the state folder finds it.
    const backend = new LocalBackend({ stateDirectory: backendDir, assets, version });
    const members = await backend.pools.listMembers(POOL);
    const bound = members.filter((member) => member.boundTo !== undefined);
    const unbound = members.filter((member) => member.boundTo === undefined);
    expect(new Set(bound.map((member) => member.boundTo)).size).toBe(bound.length);
    for (const member of bound)
      expect(byUid.has(member.boundTo ?? ""), `${member.id} bound to a Cluster`).toBe(true);
    // The binding the backend records is the one the Cluster says, both ways.
    expect(bound.map((member) => `${member.boundTo} ${member.id}`).sort()).toEqual(
      annotated.map((entry) => `${entry.cluster.metadata.uid} ${entry.member}`).sort(),
    );
    // Nothing leaked: every unbound member is an idle one of the pool's status, Ready, and there are 2.
    expect(unbound.map((member) => member.id).sort()).toEqual(
      (pool.status?.members ?? []).map((member) => member.id).sort(),
    );
    expect(pool.status?.members?.every((member) => !member.claimedBy && member.phase === "Ready")).toBe(true);
    expect(unbound).toHaveLength(IDLE);
    for (const member of unbound) expect(member.observation).toMatchObject({ exists: true, phase: "ready" });

    // Each Cluster made once: its one control plane (a bound member's, else its own under its uid), Ready, and
    // no folder beyond those and the idle members' (a bound Cluster has none under its own uid).
    const endpoints = new Set<string>();
    for (const cluster of clusters) {
      const observed = await backend.observe({
        uid: cluster.metadata.uid ?? "",
        namespace: NAMESPACE,
        name: cluster.metadata.name ?? "",
        tenancy: "Exclusive",
        profile: cluster.spec.profile,
        providerConfig: "local",
      });
      expect(observed, cluster.metadata.name).toMatchObject({ exists: true, phase: "ready" });
      if (observed.exists && observed.endpoint) endpoints.add(observed.endpoint);
    }
    expect(endpoints.size).toBe(clusters.length);
    const made = clusters
      .filter((cluster) => cluster.metadata.annotations?.[CLUSTER_POOL_ANNOTATIONS.poolMember] === undefined)
      .map((cluster) => cluster.metadata.uid ?? "");
    const folders = readdirSync(clustersDir).sort();
    expect(folders).toEqual([...members.map((member) => member.id), ...made].sort());
    expect(folders).toHaveLength(clusters.length + IDLE);

    // No control plane process without its record: every process in the clusters' folders is a recorded one, alive.
    const recorded = new Set<number>();
    for (const name of folders) {
      const status = await inspectPersistentControlPlane(join(clustersDir, name));
      expect(status.running, name).toBe(true);
      // Whole: a start killed midway is finished by the next engine, its controller-manager too.
      expect(Object.keys(status.record?.pids ?? {}).sort(), name).toEqual(
        ["apiServer", "etcd", ...(assets.kubeControllerManager ? ["controllerManager"] : [])].sort(),
      );
      for (const pid of Object.values(status.record?.pids ?? {})) recorded.add(pid);
    }
    const unrecorded = processesMentioning(clustersDir).filter((pid) => !recorded.has(pid));
    expect(unrecorded).toEqual([]);
    await backend.close();

    // The branches reached: said, not asserted (where a kill lands depends on the machine's speed).
    const hit = (what: (moment: KillMoment) => boolean) => kills.filter(what).length;
    console.log(
      `seed ${seed}: ${kills.length} kills; ${hit((m) => m.claimed > 0)} while a member was claimed (binding), ` +
        `${hit((m) => m.unheld > 0)} before a Cluster held its cluster, ${hit((m) => m.refilling > 0)} while the pool refilled, ` +
        `${hit((m) => m.unready > 0)} while a Cluster was not Ready; ` +
        `${annotated.length} of ${clusters.length} Clusters served from the pool, ${made.length} made; ` +
        `settled ${settledAfterMs} ms after the first start`,
    );
    const said = (msg: string) => outputs.join("").split(`"msg":"${msg}"`).length - 1;
    console.log(
      `the engines said: ${said("pool cluster claimed")} claims, ${said("making a pool cluster")} pool clusters ordered, ` +
        `${said("deleting a pool cluster")} deleted; ${said("finishing a local cluster whose start was cut short")} times a ` +
        "next engine finished a cluster's start cut short",
    );
  }, 600_000);
});
