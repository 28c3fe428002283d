/** Gardener's own API server, aggregated on the project's kube-apiserver: its kinds are served, with Gardener's validation and admission. */
import { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Garden, startGarden } from "../../src/dev/gardener-apiserver.ts";
import { findGardenerAssets } from "../../src/dev/gardener-assets.ts";
import {
  applyCloudProfile,
  CORE,
  createProject,
  workerlessShootSpec,
} from "../../src/dev/gardener-garden-objects.ts";

let garden: Garden;
let custom: CustomObjectsApi;
let namespace: string;

beforeAll(async () => {
  findGardenerAssets(); // builds gardener-apiserver once per machine (see hack/gardener/build.sh)
  garden = await startGarden();
  console.log(
    `garden: kube-apiserver + gardener-apiserver ${garden.gardenerVersion} served in ${garden.startMs} ms`,
  );
  custom = garden.kubeConfig.makeApiClient(CustomObjectsApi);
  await applyCloudProfile(garden.kubeConfig, "local", [{ version: "1.33.2" }, { version: "1.32.0" }]);
  namespace = await createProject(garden.kubeConfig, "dev");
}, 3_600_000);
afterAll(async () => {
  await garden?.stop();
});

/** Creates a Shoot and returns the error the API server answered with, or undefined when it was accepted. */
async function createShoot(
  name: string,
  spec: object,
): Promise<{ code?: number; body?: string } | undefined> {
  try {
    await custom.createNamespacedCustomObject({
      ...CORE,
      namespace,
      plural: "shoots",
      body: { apiVersion: "core.gardener.cloud/v1beta1", kind: "Shoot", metadata: { name }, spec },
    });
    return undefined;
  } catch (error) {
    return error as { code?: number; body?: string };
  }
}

describe("gardener-apiserver aggregated on kube-apiserver", () => {
  it("serves core.gardener.cloud/v1beta1 Projects, CloudProfiles and Shoots, and security.gardener.cloud CredentialsBindings", async () => {
    const projects = (await custom.listClusterCustomObject({ ...CORE, plural: "projects" })) as {
      items: { metadata: { name: string }; spec: { namespace: string } }[];
    };
    expect(projects.items.map((p) => [p.metadata.name, p.spec.namespace])).toEqual([["dev", "garden-dev"]]);
    const profile = (await custom.getClusterCustomObject({
      ...CORE,
      plural: "cloudprofiles",
      name: "local",
    })) as {
      spec: { kubernetes: { versions: { version: string }[] } };
    };
    expect(profile.spec.kubernetes.versions.map((v) => v.version)).toEqual(["1.33.2", "1.32.0"]);
    const shoots = (await custom.listNamespacedCustomObject({ ...CORE, namespace, plural: "shoots" })) as {
      kind: string;
    };
    expect(shoots.kind).toBe("ShootList");
    expect(garden.gardenerVersion).toMatch(/^v1\.\d+\.\d+$/);
  });

  it("accepts a workerless Shoot on the CloudProfile, and Gardener defaults and admits it", async () => {
    expect(await createShoot("ok", workerlessShootSpec("local", "1.33.2"))).toBeUndefined();
    const shoot = (await custom.getNamespacedCustomObject({
      ...CORE,
      namespace,
      plural: "shoots",
      name: "ok",
    })) as {
      metadata: { finalizers?: string[] };
      spec: { kubernetes: { version: string } };
    };
    expect(shoot.spec.kubernetes.version).toBe("1.33.2");
  });

  it("refuses a Shoot in a region the CloudProfile lacks, with Gardener's admission message", async () => {
    const error = await createShoot("nowhere", {
      ...workerlessShootSpec("local", "1.33.2"),
      region: "atlantis",
    });
    expect(error?.code).toBeGreaterThanOrEqual(400);
    expect(error?.code).toBe(403);
    expect(error?.body).toContain(
      'spec.region: Unsupported value: \\"atlantis\\": supported values: \\"local\\"',
    );
  });

  it("refuses a Shoot with a Kubernetes version the CloudProfile does not offer", async () => {
    const error = await createShoot("future", workerlessShootSpec("local", "1.99.0"));
    expect(error?.code).toBeGreaterThanOrEqual(400);
    expect(error?.code).toBe(403);
    expect(error?.body).toContain(
      'spec.kubernetes.version: Unsupported value: \\"1.99.0\\": supported values: \\"1.33.2\\", \\"1.32.0\\"',
    );
  });

  it("refuses a Shoot that fails Gardener's validation (a worker pool without a machine type)", async () => {
    const error = await createShoot("invalid", {
      ...workerlessShootSpec("local", "1.33.2"),
      provider: { type: "local", workers: [{ name: "pool", minimum: 1, maximum: 1 }] },
    });
    expect(error?.code).toBe(422);
    expect(error?.body).toContain(
      "spec.provider.workers[0].machine.type: Required value: must specify a machine type",
    );
  });
});
