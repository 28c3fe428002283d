/** The Cluster controller on a real API server with the simulated backend: the lifecycle, responsibility, races, restarts. */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { CLUSTER_FINALIZERS, CLUSTER_LABELS } from "../../src/api/constants/cluster.ts";
import { LABELS, RESOURCES } from "../../src/api/constants.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import type { Engine } from "../../src/runtime/engine.ts";
import { CACHES } from "../../src/runtime/kinds/caches.ts";
import { apiServerRequestCounts } from "../support/api-server-requests.ts";
import { aClusterProfile } from "../support/builders.ts";
import { caughtUp } from "../support/engine-signals.ts";
import { eventually } from "../support/eventually.ts";
import { isReady, startWorld, type World } from "../support/world.ts";

const PROVIDER = "engine-test";

let world: World;

beforeAll(async () => {
  // Watches end after 1–2 s, so every test also exercises the informers' resume.
  world = await startWorld({ provider: PROVIDER, engine: false, apiServerArgs: ["--min-request-timeout=1"] });
  await world.custom.createClusterCustomObject({
    ...RESOURCES.ClusterProfile,
    body: aClusterProfile({
      provider: "someone-else",
      versions: [{ version: "1.33.3" }, { version: "1.32.7" }],
    }),
  });
});

afterAll(async () => {
  await world?.stop();
});

/** Deletes every Cluster of the namespace and waits until all are gone (the controller must still run). */
async function deleteAllClusters(): Promise<void> {
  const { custom, namespace } = world;
  const names = (await world.list<Cluster>(RESOURCES.Cluster)).map((cluster) => cluster.metadata.name ?? "");
  for (const name of names)
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace, name });
  for (const name of names) await world.waitFor(name, (c) => c === undefined);
}

/** Runs `body` with a started controller; leaves no Cluster behind for the next test. */
async function withController(
  backend: SimulatedBackend,
  body: (engine: Engine) => Promise<void>,
  extra: { recordEvents?: boolean } = {},
): Promise<void> {
  const controller = await startController(backend, extra);
  try {
    await body(controller);
  } finally {
    await deleteAllClusters();
    await controller.stop();
  }
}

/** An engine of its own on the world: the test stops it (the world stops it again, harmlessly). */
const startController = (backend: SimulatedBackend, extra: { recordEvents?: boolean } = {}) =>
  world.startEngine({ backend, ...extra });

/** The Clusters of these names as the API server holds them now (all must exist). */
const current = (...names: string[]) =>
  Promise.all(
    names.map(async (name) => {
      const cluster = await world.readCluster(name);
      if (!cluster) throw new Error(`Cluster ${name} does not exist`);
      return cluster;
    }),
  );

/** How many watches of Clusters the API server has ended so far (`apiserver_request_total`, verb WATCH). */
async function endedClusterWatches(): Promise<number> {
  let ended = 0;
  for (const { labels, count } of await apiServerRequestCounts(world.controlPlane.kubeConfig)) {
    if (labels.includes('resource="clusters"') && labels.includes('verb="WATCH"')) ended += count;
  }
  return ended;
}

describe("the Cluster controller", () => {
  it("brings a Cluster to Ready with endpoint, labels and finalizer, then deletes it at the backend", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 300, deleteDelayMs: 300 });
    await withController(backend, async () => {
      await world.createCluster("lifecycle");
      const ready = await world.waitFor("lifecycle", isReady);
      expect(ready?.metadata.finalizers).toEqual([CLUSTER_FINALIZERS.cluster]);
      expect(ready?.metadata.labels).toMatchObject({
        [LABELS.provider]: PROVIDER,
        [CLUSTER_LABELS.k8sVersion]: "1.33.3",
      });
      expect(ready?.status?.endpoints?.[0]).toMatchObject({ name: "apiserver-external" });
      expect(ready?.status?.providerStatus).toMatchObject({ state: "ready" });
      expect(ready?.status?.observedGeneration).toBe(1);
      expect(backend.size).toBe(1);

      await world.custom.deleteNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: world.namespace,
        name: "lifecycle",
      });
      await world.waitFor("lifecycle", (cluster) => cluster === undefined);
      expect(backend.size).toBe(0);
    });
  });

  it("never writes to a Cluster whose profile belongs to another provider", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 0 });
    await withController(backend, async (engine) => {
      const foreign = await world.createCluster("foreign", { profile: "test.someone-else.small" });
      await world.createCluster("ours-beside-foreign");
      await world.waitFor("ours-beside-foreign", isReady);
      // The positive signal: the engine holds the foreign Cluster as it is now and has finished reconciling.
      await caughtUp(engine, engine.informers.of(CACHES.clusters), () => current("foreign"));
      const after = await world.readCluster("foreign");
      expect(after?.metadata.resourceVersion).toBe(foreign.metadata.resourceVersion);
      expect(after?.status).toBeUndefined();
      expect(backend.createdTotal).toBe(1);
    });
  });

  it("reports an unsupported version on a condition and calls no backend", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 0 });
    await withController(backend, async () => {
      await world.createCluster("too-old", { kubernetes: { version: "1.20" } });
      const failed = await world.waitFor("too-old", (c) => c?.status?.providerStatus?.state === "failed");
      expect(failed?.status?.phase).toBe("Progressing");
      expect(failed?.status?.conditions).toContainEqual(
        expect.objectContaining({ type: "VersionSupported", status: "False", reason: "UnsupportedVersion" }),
      );
      expect(failed?.metadata.finalizers).toBeUndefined();
      expect(backend.createdTotal).toBe(0);
    });
  });

  it("reaches Ready with at most three writes per Cluster and writes nothing more at rest", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 0 });
    await withController(
      backend,
      async (engine) => {
        const names = ["w-1", "w-2", "w-3", "w-4"];
        await Promise.all(names.map((name) => world.createCluster(name)));
        const ready = await Promise.all(names.map((name) => world.waitFor(name, isReady)));
        // At rest: the engine has seen its own last writes and finished the reconciles they caused.
        await caughtUp(engine, engine.informers.of(CACHES.clusters), () => current(...names));
        expect(engine.machine("Cluster").writes).toBeLessThanOrEqual(3 * names.length);
        const later = await current(...names);
        expect(later.map((c) => c.metadata.resourceVersion)).toEqual(
          ready.map((c) => c?.metadata.resourceVersion),
        );
      },
      { recordEvents: false },
    );
  });

  it("keeps a concurrent edit by another client made during the reconcile", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 0 });
    const create = backend.create.bind(backend);
    backend.create = async (target: ClusterTarget, version: string) => {
      await world.custom.patchNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: world.namespace,
        name: target.name,
        body: [{ op: "add", path: "/metadata/labels/team", value: "blue" }],
      });
      return create(target, version);
    };
    await withController(backend, async () => {
      await world.createCluster("raced");
      const ready = await world.waitFor("raced", isReady);
      expect(ready?.metadata.labels).toMatchObject({ team: "blue", [LABELS.provider]: PROVIDER });
      expect(backend.createdTotal).toBe(1);
    });
  });

  it("keeps watching across the API server ending its watches (every 1–2 s here)", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 0 });
    await withController(backend, async (engine) => {
      const before = engine.informers.of(CACHES.clusters).resourceVersion;
      const ended = await endedClusterWatches();
      await eventually(async () => expect(await endedClusterWatches()).toBeGreaterThanOrEqual(ended + 2), {
        what: "the API server to end two more watches of Clusters",
        timeoutMs: 15_000,
        intervalMs: 250,
      });
      await world.createCluster("after-timeouts");
      await world.waitFor("after-timeouts", isReady, 5_000);
      expect(engine.informers.of(CACHES.clusters).resourceVersion).not.toBe(before);
    });
  });

  it("resumes after a restart mid-provisioning with exactly one backend create", async () => {
    const folder = mkdtempSync(join(tmpdir(), "sim-"));
    const stateDirectory = join(folder, "state");
    try {
      const first = await startController(new SimulatedBackend({ provisionDelayMs: 1_500, stateDirectory }));
      await world.createCluster("restarted");
      await world.waitFor("restarted", (c) => c?.status?.providerStatus?.state === "provisioning");
      await first.stop();

      const backend = new SimulatedBackend({ provisionDelayMs: 1_500, stateDirectory });
      await withController(backend, async () => {
        await world.waitFor("restarted", isReady);
        expect(backend.createdTotal).toBe(1);
      });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
