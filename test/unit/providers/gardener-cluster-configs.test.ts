/** ClusterConfigs on a Shoot: extensions by type, resources by name, patches last, and clear errors naming the ClusterConfig. */
import { describe, expect, it } from "vitest";
import type { ResolvedClusterConfig } from "../../../src/api/backend.ts";
import type { JsonObject } from "../../../src/api/common.ts";
import { applyClusterConfigs, ClusterConfigError } from "../../../src/providers/gardener-cluster-configs.ts";
import {
  desiredShoot,
  GARDENER_KEYS,
  type Shoot,
  shootChanges,
} from "../../../src/providers/gardener-shoot.ts";
import { aClusterTarget } from "../../support/builders.ts";
import { localGardenerSettings } from "../../support/gardener-settings.ts";

const settings = localGardenerSettings({
  spec: { extensions: [{ type: "shoot-dns-service", providerConfig: { zone: "a" } }] },
});
const target = aClusterTarget({ providerConfig: "gardener" });
const config = (name: string, spec: JsonObject): ResolvedClusterConfig => ({ name, found: true, spec });
const shootWith = (...clusterConfigs: ResolvedClusterConfig[]) =>
  desiredShoot({ ...target, clusterConfigs }, settings, "garden-dev", "1.33.2");
/** The error `make` throws, or a failure when it throws none. */
const errorOf = (make: () => unknown): ClusterConfigError => {
  try {
    make();
  } catch (error) {
    if (error instanceof ClusterConfigError) return error;
    throw error;
  }
  throw new Error("expected a ClusterConfigError, got none");
};

describe("applyClusterConfigs", () => {
  it("merges extensions by type and resources by name, in the Cluster's order, later configs winning", () => {
    const shoot = shootWith(
      config("first", {
        extensions: [
          { type: "shoot-dns-service", providerConfig: { zone: "b" } },
          { type: "shoot-oidc-service" },
        ],
        resources: [{ name: "ca", resourceRef: { apiVersion: "v1", kind: "ConfigMap", name: "ca-1" } }],
      }),
      config("second", {
        extensions: [{ type: "shoot-oidc-service", disabled: true }],
        resources: [
          { name: "ca", resourceRef: { apiVersion: "v1", kind: "ConfigMap", name: "ca-2" } },
          { name: "creds", resourceRef: { apiVersion: "v1", kind: "Secret", name: "creds" } },
        ],
      }),
    );
    expect(shoot.spec.extensions).toEqual([
      { type: "shoot-dns-service", providerConfig: { zone: "b" } },
      { type: "shoot-oidc-service", disabled: true },
    ]);
    expect(shoot.spec.resources).toEqual([
      { name: "ca", resourceRef: { apiVersion: "v1", kind: "ConfigMap", name: "ca-2" } },
      { name: "creds", resourceRef: { apiVersion: "v1", kind: "Secret", name: "creds" } },
    ]);
  });

  it("applies patches after the config's extensions and resources, so a patch can refine them", () => {
    const shoot = shootWith(
      config("p", {
        extensions: [{ type: "shoot-oidc-service" }],
        patches: [
          { op: "add", path: "/spec/extensions/1/disabled", value: true },
          { op: "add", path: "/spec/purpose", value: "evaluation" },
          { op: "add", path: "/metadata/annotations/example.com~1note", value: "hi" },
        ],
      }),
    );
    expect(shoot.spec.extensions).toEqual([
      { type: "shoot-dns-service", providerConfig: { zone: "a" } },
      { type: "shoot-oidc-service", disabled: true },
    ]);
    expect(shoot.spec.purpose).toBe("evaluation");
    expect(shoot.metadata.annotations?.["example.com/note"]).toBe("hi");
  });

  it("leaves the Shoot it is given untouched and returns it as is without configs", () => {
    const base = desiredShoot(target, settings, "garden-dev", "1.33.2");
    const copy = JSON.parse(JSON.stringify(base)) as Shoot;
    const place = { namespace: "team-a", cluster: "dev" };
    expect(applyClusterConfigs(base, undefined, place, [])).toBe(base);
    applyClusterConfigs(
      base,
      [config("p", { patches: [{ op: "replace", path: "/spec/region", value: "other" }] })],
      place,
      [],
    );
    expect(base).toEqual(copy);
  });

  it("honours patchOptions: a missing path on remove is skipped, missing parents on add are created", () => {
    const shoot = shootWith(
      config("opts", {
        patchOptions: { ignoreMissingOnRemove: true, createMissingOnAdd: true },
        patches: [
          { op: "remove", path: "/spec/seedName" },
          { op: "add", path: "/spec/maintenance/autoUpdate/kubernetesVersion", value: false },
        ],
      }),
    );
    expect(shoot.spec.maintenance).toEqual({ autoUpdate: { kubernetesVersion: false } });
    const error = errorOf(() =>
      shootWith(config("strict", { patches: [{ op: "remove", path: "/spec/seedName" }] })),
    );
    expect(error.message).toMatch(
      /^ClusterConfig team-a\/strict: spec\.patches\[0\] \(remove \/spec\/seedName\) cannot be applied to the Shoot: /,
    );
  });

  it("names a missing ClusterConfig and the Cluster that names it", () => {
    const error = errorOf(() => shootWith({ name: "gone", found: false }));
    expect(error.kind).toBe("NotFound");
    expect(error.message).toBe(
      "ClusterConfig team-a/gone (spec.clusterConfigs of Cluster team-a/dev) does not exist; create it or remove it from the list",
    );
  });

  it("refuses a failed test, a path that is no JSON pointer and malformed lists with the ClusterConfig's name, never the document", () => {
    const failedTest = errorOf(() =>
      shootWith(config("t", { patches: [{ op: "test", path: "/spec/region", value: "mars" }] })),
    );
    expect(failedTest.kind).toBe("Invalid");
    expect(failedTest.message).toBe(
      "ClusterConfig team-a/t: spec.patches[0] (test /spec/region) cannot be applied to the Shoot: Test operation failed",
    );
    expect(
      errorOf(() =>
        shootWith(config("dots", { patches: [{ op: "add", path: ".spec.purpose", value: "x" }] })),
      ).message,
    ).toContain('ClusterConfig team-a/dots: spec.patches[0].path ".spec.purpose" is not a JSON pointer');
    expect(
      errorOf(() => shootWith(config("bad", { patches: [{ op: "frobnicate", path: "/x" }] }))).message,
    ).toBe(
      "ClusterConfig team-a/bad: spec.patches[0] needs an op (add, remove, replace, move, copy or test)",
    );
    expect(errorOf(() => shootWith(config("ext", { extensions: [{ providerConfig: {} }] }))).message).toBe(
      "ClusterConfig team-a/ext: every entry of spec.extensions needs a type",
    );
    expect(errorOf(() => shootWith(config("list", { resources: { name: "x" } }))).message).toBe(
      "ClusterConfig team-a/list: spec.resources must be a list",
    );
  });

  it("refuses patches that would change what ties the Shoot to its Cluster, or its version", () => {
    const error = errorOf(() =>
      shootWith(
        config("evil", {
          patches: [
            { op: "replace", path: "/metadata/name", value: "other" },
            { op: "replace", path: "/spec/kubernetes/version", value: "1.34.0" },
            {
              op: "remove",
              path: `/metadata/annotations/${GARDENER_KEYS.clusterUidAnnotation.replace("/", "~1")}`,
            },
          ],
        }),
      ),
    );
    expect(error.message).toBe(
      `ClusterConfig team-a/evil: its patches may not change the Shoot's metadata.name, spec.kubernetes.version (set it in the Cluster's spec.kubernetes.version), metadata.annotations.${GARDENER_KEYS.clusterUidAnnotation}`,
    );
  });

  it("makes a field a ClusterConfig no longer sets inside an extension a change (extensions compared exactly)", () => {
    const stored = shootWith(config("c", { extensions: [{ type: "shoot-oidc-service", disabled: true }] }));
    const wanted = shootWith(config("c", { extensions: [{ type: "shoot-oidc-service" }] }));
    expect(shootChanges(stored, wanted)).toEqual({
      spec: {
        extensions: [
          { type: "shoot-dns-service", providerConfig: { zone: "a" } },
          { type: "shoot-oidc-service" },
        ],
      },
    });
  });

  it("makes a changed ClusterConfig a change of the stored Shoot, and an unchanged one none", () => {
    const stored = shootWith(config("c", { extensions: [{ type: "shoot-oidc-service" }] }));
    expect(
      shootChanges(stored, shootWith(config("c", { extensions: [{ type: "shoot-oidc-service" }] }))),
    ).toBeUndefined();
    expect(
      shootChanges(
        stored,
        shootWith(config("c", { extensions: [{ type: "shoot-oidc-service", disabled: true }] })),
      ),
    ).toEqual({
      spec: {
        extensions: [
          { type: "shoot-dns-service", providerConfig: { zone: "a" } },
          { type: "shoot-oidc-service", disabled: true },
        ],
      },
    });
  });
});
