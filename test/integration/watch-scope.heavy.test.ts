/**
 * `run --namespace` and `--watch-filter` on a real API server, as Cluster API asks of a provider that runs
 * as several instances: objects outside the namespace, and Cluster API objects without the instance's
 * filter label, are never reconciled.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { CAPI_CLUSTER_RESOURCE, CAPI_LABELS } from "../../src/api/cluster-api.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { EngineCluster } from "../../src/api/engine-cluster.ts";
import {
  type ControlPlane,
  kubeconfigYaml,
  startControlPlane,
} from "../../src/controlplane/control-plane.ts";
import { findCapiAssets } from "../../src/dev/capi-assets.ts";
import { installCrds } from "../../src/runtime/api-server/install-crds.ts";
import { aCluster, aProviderConfig } from "../support/builders.ts";
import { eventually } from "../support/eventually.ts";
import { engineRunArgs, startEngineCli } from "../support/processes.ts";

const root = join(import.meta.dirname, "..", "..");
const PROFILE = "default.scoped.sim"; // <environment>.<provider-name>.<ProviderConfig>

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;
let folder: string;

beforeAll(async () => {
  controlPlane = await startControlPlane();
  await installCrds(controlPlane.kubeConfig, { directory: join(root, "crds") });
  await installCrds(controlPlane.kubeConfig, { directory: findCapiAssets().crdDirectory });
  custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of ["inside", "outside"]) await core.createNamespace({ body: { metadata: { name } } });
  await custom.createClusterCustomObject({
    ...RESOURCES.ProviderConfig,
    body: aProviderConfig({ name: "sim", backend: "simulated" }),
  });
  folder = mkdtempSync(join(tmpdir(), "watch-scope-"));
  writeFileSync(join(folder, "kubeconfig"), kubeconfigYaml(controlPlane.kubeConfig));
});

afterAll(async () => {
  await controlPlane?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

/** A CAPI Cluster and the EngineCluster it owns, both labelled for the instance `filter`. */
async function capiPair(namespace: string, name: string, filter: string): Promise<void> {
  const labels = { [CAPI_LABELS.watchFilter]: filter };
  const owner = (await custom.createNamespacedCustomObject({
    ...CAPI_CLUSTER_RESOURCE,
    namespace,
    body: {
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "Cluster",
      metadata: { name, labels },
      spec: {
        infrastructureRef: { apiGroup: "infrastructure.engine.openmcp.cloud", kind: "EngineCluster", name },
      },
    },
  })) as { metadata: { uid: string } };
  await custom.createNamespacedCustomObject({
    ...RESOURCES.EngineCluster,
    namespace,
    body: {
      apiVersion: "infrastructure.engine.openmcp.cloud/v1alpha1",
      kind: "EngineCluster",
      metadata: {
        name,
        labels,
        ownerReferences: [
          { apiVersion: "cluster.x-k8s.io/v1beta2", kind: "Cluster", name, uid: owner.metadata.uid },
        ],
      },
      spec: { profile: PROFILE },
    },
  });
}

const read = <T>(
  resource: { readonly group: string; readonly version: string; readonly plural: string },
  namespace: string,
  name: string,
) => custom.getNamespacedCustomObject({ ...resource, namespace, name }) as Promise<T>;

describe("run --namespace inside --watch-filter blue", () => {
  it("reconciles the objects of its namespace and filter, and leaves every other one untouched", async () => {
    // The objects it must not touch come first: by the time the in-scope ones are done, it has had them.
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: "outside",
      body: aCluster({ name: "c", namespace: "outside", profile: PROFILE }),
    });
    await capiPair("outside", "blue", "blue");
    await capiPair("inside", "red", "red");
    await custom.createNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: "inside",
      body: aCluster({ name: "c", namespace: "inside", profile: PROFILE }),
    });
    await capiPair("inside", "blue", "blue");

    const engine = startEngineCli(
      engineRunArgs(
        { provider: "scoped", kubeconfig: join(folder, "kubeconfig"), stateDir: join(folder, "state") },
        "--namespace=inside",
        "--watch-filter=blue",
        "--capi",
        "--backend-option=delay=200ms",
        "--no-leader-elect",
      ),
    );
    try {
      // Positive signals: the in-scope Cluster and EngineCluster are done.
      await eventually(
        async () =>
          expect((await read<Cluster>(RESOURCES.Cluster, "inside", "c")).status?.phase).toBe("Ready"),
        { what: `Cluster inside/c Ready\n${engine.output()}` },
      );
      await eventually(
        async () =>
          expect(
            (await read<EngineCluster>(RESOURCES.EngineCluster, "inside", "blue")).status?.initialization
              ?.provisioned,
          ).toBe(true),
        { what: `EngineCluster inside/blue provisioned\n${engine.output()}` },
      );
      expect(engine.output()).toMatch(/"namespace":"inside"/);
      expect(engine.output()).toMatch(/"watchFilter":"blue"/);

      // The rest: not a finalizer, not a status, not a label written.
      const untouched = [
        await read<Cluster>(RESOURCES.Cluster, "outside", "c"),
        await read<EngineCluster>(RESOURCES.EngineCluster, "outside", "blue"),
        await read<EngineCluster>(RESOURCES.EngineCluster, "inside", "red"),
      ];
      for (const object of untouched) {
        const where = `${object.kind} ${object.metadata.namespace}/${object.metadata.name}`;
        expect(object.metadata.finalizers ?? [], where).toEqual([]);
        expect((object as { status?: unknown }).status, where).toBeUndefined();
        expect(object.metadata.generation, where).toBe(1);
      }
      expect(
        (await read<EngineCluster>(RESOURCES.EngineCluster, "inside", "blue")).metadata.finalizers?.length,
      ).toBeGreaterThan(0);
    } finally {
      engine.child.kill("SIGTERM");
      await new Promise((resolve) => engine.child.once("exit", resolve));
    }
  }, 120_000);
});
