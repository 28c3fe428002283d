/** Guarded patches on a real API server: applied at the read version, refused (ConflictError) after any other write, TerminalError when invalid. */

import type { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cluster } from "../../src/api/cluster.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { apiStatusOf } from "../../src/api/error-message.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { Patch } from "../../src/machines/shared/json-patch.ts";
import { patchObject } from "../../src/runtime/api-server/patch-object.ts";
import { classifyFailure } from "../../src/runtime/controllers/error-policy.ts";
import { ConflictError, GoneError, TerminalError } from "../../src/runtime/controllers/errors.ts";
import { aCluster } from "../support/builders.ts";
import { startApiServerWith } from "../support/cluster-harness.ts";

let controlPlane: ControlPlane;
let custom: CustomObjectsApi;

beforeAll(async () => {
  ({ controlPlane, custom } = await startApiServerWith("p"));
});

afterAll(async () => {
  await controlPlane?.stop();
});

const target = (cluster: Cluster) => ({
  ...RESOURCES.Cluster,
  namespace: "p",
  name: cluster.metadata.name ?? "",
  resourceVersion: cluster.metadata.resourceVersion ?? "",
});

async function create(name: string): Promise<Cluster> {
  return (await custom.createNamespacedCustomObject({
    ...RESOURCES.Cluster,
    namespace: "p",
    body: aCluster({ name, namespace: "p", profile: "x" }),
  })) as Cluster;
}

describe("patchObject", () => {
  it("applies operations to the version they were computed from, escaping label keys", async () => {
    const cluster = await create("fresh");
    const stored = (await patchObject(controlPlane.kubeConfig, target(cluster), [
      Patch.add(["metadata", "labels"], { "clusters.openmcp.cloud/provider": "me" }),
    ])) as unknown as Cluster;
    expect(stored.metadata.labels).toEqual({ "clusters.openmcp.cloud/provider": "me" });
    const withStatus = (await patchObject(
      controlPlane.kubeConfig,
      target(stored),
      [Patch.add(["status"], { observedGeneration: 1, phase: "Progressing" })],
      "status",
    )) as unknown as Cluster;
    expect(withStatus.status?.phase).toBe("Progressing");
  });

  it("refuses with ConflictError when anyone wrote in between, on the object and on its status", async () => {
    const cluster = await create("contested");
    await custom.patchNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: "p",
      name: "contested",
      body: [{ op: "add", path: "/metadata/annotations", value: { other: "writer" } }],
    });
    const operations = [Patch.add(["metadata", "labels"], { mine: "yes" })];
    await expect(patchObject(controlPlane.kubeConfig, target(cluster), operations)).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(
      patchObject(
        controlPlane.kubeConfig,
        target(cluster),
        [Patch.add(["status"], { observedGeneration: 1, phase: "x" })],
        "status",
      ),
    ).rejects.toBeInstanceOf(ConflictError);
    const after = (await custom.getNamespacedCustomObject({
      ...RESOURCES.Cluster,
      namespace: "p",
      name: "contested",
    })) as Cluster;
    expect(after.metadata.labels).toBeUndefined();
    expect(after.metadata.annotations).toEqual({ other: "writer" });
  });

  it("passes on a patch the server rejects for itself, at the current version, as the API error it is", async () => {
    const cluster = await create("malformed");
    const failure = await patchObject(controlPlane.kubeConfig, target(cluster), [
      Patch.remove(["metadata", "labels", "absent"]),
    ]).catch((error: unknown) => error);
    expect(failure).not.toBeInstanceOf(ConflictError);
    expect((failure as { code?: number }).code).toBe(422);
  });

  it("refuses a write the schema rejects (422 Invalid with field causes) as a TerminalError carrying the Status", async () => {
    const cluster = await create("invalid");
    const failure = await patchObject(controlPlane.kubeConfig, target(cluster), [
      Patch.replace(["spec", "tenancy"], "Bogus"),
    ]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TerminalError);
    expect((failure as Error).message).toMatch(
      /^clusters\/p\/invalid was refused as invalid \(422 Invalid: .*spec\.tenancy/,
    );
    expect(classifyFailure(failure)).toEqual({ kind: "terminal" });
    expect(apiStatusOf(failure)).toMatchObject({ code: 422, reason: "Invalid" });
  });

  it("reports a deleted object as GoneError and sends nothing for no operations", async () => {
    const cluster = await create("doomed");
    await custom.deleteNamespacedCustomObject({ ...RESOURCES.Cluster, namespace: "p", name: "doomed" });
    await expect(
      patchObject(controlPlane.kubeConfig, target(cluster), [Patch.add(["metadata", "labels"], {})]),
    ).rejects.toBeInstanceOf(GoneError);
    expect(await patchObject(controlPlane.kubeConfig, target(cluster), [])).toBeUndefined();
  });
});
