/**
 * A warm pool of real local clusters (each an etcd, a kube-apiserver and a controller-manager of this machine)
 * served by the engine on a real management API server: with a pool of 2, three Clusters created at once — two
 * bound to the pool's clusters (the time to Ready printed), the third made as a cluster of its own — and the pool
 * back at 2. A bound Cluster's admin access is its member's API server; deleting all leaves no cluster folder.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { type ControlPlane, startControlPlane } from "../../src/controlplane/control-plane.ts";
import { inspectPersistentControlPlane } from "../../src/controlplane/persistent-control-plane.ts";
import { createBackend } from "../../src/providers/local.ts";
import { systemClock } from "../../src/runtime/clock.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { installingCrds } from "../../src/runtime/install-crds.ts";
import { createLogger } from "../../src/runtime/logger.ts";
import { aClusterTarget, aProviderConfig } from "../support/builders.ts";
import {
  createPool,
  deleteAll,
  type PoolBurstWorld,
  poolMemberOf,
  threeAtOnce,
} from "../support/pool-burst.ts";

const NS = "local-pool";
const PROFILE = "test.local-pool.local";
const stateDirectory = mkdtempSync(join(tmpdir(), "local-pool-"));
const clustersDirectory = join(stateDirectory, "clusters");
const logLines: string[] = [];
let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
let engine: Engine;
let backend: ClusterBackend;

const world = (): PoolBurstWorld => ({
  custom,
  namespace: NS,
  profile: PROFILE,
  providerConfig: "local",
  patienceMs: 180_000,
});

/** The local clusters' folders (one a cluster: a pool member's id or a Cluster's uid). */
const folders = () => (existsSync(clustersDirectory) ? readdirSync(clustersDirectory) : []);

beforeAll(async () => {
  controlPlane = await startControlPlane({ prepare: installingCrds("crds") });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  await controlPlane.kubeConfig
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: { metadata: { name: NS } } });
  backend = await createBackend({
    stateDirectory,
    options: { stopOnClose: "true" },
    log: createLogger({ write: (line) => logLines.push(line) }),
    clock: systemClock,
    readSecret: async () => undefined,
  });
  engine = new Engine({
    kubeConfig: controlPlane.kubeConfig,
    providerName: "local-pool",
    environment: "test",
    backend,
    log: createLogger({ level: "debug", write: (line) => logLines.push(line) }),
    kindSettings: { Cluster: { pools: true } },
  });
  await engine.start();
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "local", backend: "local", providerRef: { name: "local-pool" } }),
  });
  await createPool(world(), 2);
}, 180_000);

afterAll(async () => {
  await engine?.stop();
  await backend?.close?.();
  await controlPlane?.stop();
  rmSync(stateDirectory, { recursive: true, force: true });
});

describe("a warm pool of 2 real local clusters", { timeout: 300_000 }, () => {
  it("serves two of three Clusters created at once, makes the third a cluster of its own, and refills to 2", async () => {
    const { fromPool, made } = await threeAtOnce(world(), "local");

    // A bound Cluster's admin access is its member's kube-apiserver (the member's folder, named by its id).
    for (const { cluster } of fromPool) {
      const member = poolMemberOf(cluster) ?? "";
      const { record } = await inspectPersistentControlPlane(join(clustersDirectory, member));
      const access = await backend.adminAccess(
        aClusterTarget({
          uid: cluster.metadata.uid ?? "",
          namespace: NS,
          name: cluster.metadata.name ?? "",
          profile: PROFILE,
          providerConfig: "local",
        }),
      );
      const admin = new KubeConfig();
      admin.loadFromString(access?.kubeconfig ?? "");
      expect(new URL(admin.getCurrentCluster()?.server ?? "").port).toBe(String(record?.ports.apiServer));
      expect((await admin.makeApiClient(CoreV1Api).listNamespace()).items.length).toBeGreaterThan(0);
    }
    // The third is a cluster of its own, in a folder named by its uid; five in all: two bound, one made, two idle.
    expect(folders()).toContain(made.cluster.metadata.uid);
    expect(folders()).toHaveLength(5);
  });

  it("deletes a bound Cluster's cluster with it, and the idle ones with the pool: no cluster left", async () => {
    await deleteAll(world(), () => folders().length === 0);
    expect(logLines.join("\n")).not.toMatch(/BEGIN CERTIFICATE|client-key-data|eyJhbGci/);
  });
});
