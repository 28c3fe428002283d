/** The Cluster controller on a real API server with the simulated backend: the lifecycle, responsibility, races, restarts. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { Cluster } from "../../src/api/cluster.ts";
import { CLUSTERS_API_VERSION, FINALIZERS, LABELS, RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { Engine } from "../../src/runtime/engine.ts";

const PROVIDER = "engine-test";
const NAMESPACE = "clusters";
const FAST = { pollMs: 100, retryMs: 200, resyncMs: 60_000 };

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;

beforeAll(async () => {
  // Watches end after 1–2 s, so every test also exercises the informers' resume.
  controlPlane = await startControlPlane({
    crdDirectory: "crds",
    extraApiServerArgs: ["--min-request-timeout=1"],
  });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NAMESPACE } } });
  for (const [name, provider] of [
    ["test.engine-test.small", PROVIDER],
    ["test.someone-else.small", "someone-else"],
  ] as const) {
    await custom.createClusterCustomObject({
      ...RESOURCES.ClusterProfile,
      body: {
        apiVersion: CLUSTERS_API_VERSION,
        kind: "ClusterProfile",
        metadata: { name },
        spec: {
          providerRef: { name: provider },
          providerConfigRef: { name: "small" },
          supportedVersions: [{ version: "1.33.3" }, { version: "1.32.7" }],
        },
      },
    });
  }
});

afterAll(async () => {
  await controlPlane?.stop();
});

/** Deletes every Cluster of the namespace and waits until all are gone (the controller must still run). */
async function deleteAllClusters(): Promise<void> {
  const list = (await custom.listNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NAMESPACE })) as {
    items: Cluster[];
  };
  for (const cluster of list.items) {
    const name = cluster.metadata.name ?? "";
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: NAMESPACE, name });
  }
  for (const cluster of list.items) await waitFor(cluster.metadata.name ?? "", (c) => c === undefined);
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

function startController(backend: SimulatedBackend, extra: { recordEvents?: boolean } = {}) {
  const engine = new Engine({
    kubeConfig: controlPlane.kubeConfig,
    providerName: PROVIDER,
    environment: "test",
    backend,
    timing: FAST,
    ...extra,
  });
  return engine.start().then(() => engine);
}

async function createCluster(name: string, spec: Partial<Cluster["spec"]> = {}): Promise<Cluster> {
  return (await custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: NAMESPACE,
    body: {
      apiVersion: CLUSTERS_API_VERSION,
      kind: "Cluster",
      metadata: { name },
      spec: { profile: "test.engine-test.small", tenancy: "Exclusive", ...spec },
    },
  })) as Cluster;
}

async function readCluster(name: string): Promise<Cluster | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: NAMESPACE,
      name,
    })) as Cluster;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** Polls until `predicate` holds for the Cluster (or its absence); fails with the last object seen. */
async function waitFor(
  name: string,
  predicate: (cluster: Cluster | undefined) => boolean,
  timeoutMs = 20_000,
) {
  const deadline = Date.now() + timeoutMs;
  let last: Cluster | undefined;
  for (;;) {
    last = await readCluster(name);
    if (predicate(last)) return last;
    if (Date.now() > deadline)
      throw new Error(`condition not met for ${name}; last seen:\n${JSON.stringify(last, null, 2)}`);
    await sleep(50);
  }
}

const isReady = (cluster: Cluster | undefined) => cluster?.status?.phase === "Ready";

describe("the Cluster controller", () => {
  it("brings a Cluster to Ready with endpoint, labels and finalizer, then deletes it at the backend", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 300, deleteDelayMs: 300 });
    await withController(backend, async () => {
      await createCluster("lifecycle");
      const ready = await waitFor("lifecycle", isReady);
      expect(ready?.metadata.finalizers).toEqual([FINALIZERS.cluster]);
      expect(ready?.metadata.labels).toMatchObject({
        [LABELS.provider]: PROVIDER,
        [LABELS.k8sVersion]: "1.33.3",
      });
      expect(ready?.status?.endpoints?.[0]).toMatchObject({ name: "apiserver-external" });
      expect(ready?.status?.providerStatus).toMatchObject({ state: "ready" });
      expect(ready?.status?.observedGeneration).toBe(1);
      expect(backend.size).toBe(1);

      await custom.deleteNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NAMESPACE,
        name: "lifecycle",
      });
      await waitFor("lifecycle", (cluster) => cluster === undefined);
      expect(backend.size).toBe(0);
    });
  });

  it("never writes to a Cluster whose profile belongs to another provider", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 0 });
    await withController(backend, async () => {
      const foreign = await createCluster("foreign", { profile: "test.someone-else.small" });
      await createCluster("ours-beside-foreign");
      await waitFor("ours-beside-foreign", isReady);
      await sleep(300);
      const after = await readCluster("foreign");
      expect(after?.metadata.resourceVersion).toBe(foreign.metadata.resourceVersion);
      expect(after?.status).toBeUndefined();
      expect(backend.createdTotal).toBe(1);
    });
  });

  it("reports an unsupported version on a condition and calls no backend", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 0 });
    await withController(backend, async () => {
      await createCluster("too-old", { kubernetes: { version: "1.20" } });
      const failed = await waitFor("too-old", (c) => c?.status?.providerStatus?.state === "failed");
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
        await Promise.all(names.map((name) => createCluster(name)));
        const ready = await Promise.all(names.map((name) => waitFor(name, isReady)));
        await sleep(500);
        expect(engine.clusters.writes).toBeLessThanOrEqual(3 * names.length);
        const later = await Promise.all(names.map(readCluster));
        expect(later.map((c) => c?.metadata.resourceVersion)).toEqual(
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
      await custom.patchNamespacedCustomObject({
        ...RESOURCES.Cluster,
        namespace: NAMESPACE,
        name: target.name,
        body: [{ op: "add", path: "/metadata/labels/team", value: "blue" }],
      });
      return create(target, version);
    };
    await withController(backend, async () => {
      await createCluster("raced");
      const ready = await waitFor("raced", isReady);
      expect(ready?.metadata.labels).toMatchObject({ team: "blue", [LABELS.provider]: PROVIDER });
      expect(backend.createdTotal).toBe(1);
    });
  });

  it("keeps watching across the API server ending its watches (every 1–2 s here)", async () => {
    const backend = new SimulatedBackend({ provisionDelayMs: 0 });
    await withController(backend, async (engine) => {
      const before = engine.informers.clusters.resourceVersion;
      await sleep(5_000); // at least two watch timeouts pass
      await createCluster("after-timeouts");
      await waitFor("after-timeouts", isReady, 5_000);
      expect(engine.informers.clusters.resourceVersion).not.toBe(before);
    });
  });

  it("resumes after a restart mid-provisioning with exactly one backend create", async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), "sim-")), "state.json");
    const first = await startController(new SimulatedBackend({ provisionDelayMs: 1_500, stateFile }));
    await createCluster("restarted");
    await waitFor("restarted", (c) => c?.status?.providerStatus?.state === "provisioning");
    await first.stop();

    const backend = new SimulatedBackend({ provisionDelayMs: 1_500, stateFile });
    await withController(backend, async () => {
      await waitFor("restarted", isReady);
      expect(backend.createdTotal).toBe(1);
    });
  });
});
