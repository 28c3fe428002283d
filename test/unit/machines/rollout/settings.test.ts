/** Which settings a Cluster's target gets while a settings Rollout runs, and the hash shown instead of them. */
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../../src/api/cluster.ts";
import type { ProviderConfig } from "../../../../src/api/provider-config.ts";
import type { Rollout } from "../../../../src/api/rollout.ts";
import { clusterSettings, mergeSettings, settingsHash } from "../../../../src/machines/rollout/settings.ts";
import { fleetCluster, fleetRollout } from "../../../support/rollout-fleet.ts";

const config = (settings?: ProviderConfig["spec"]["settings"]): ProviderConfig =>
  ({
    apiVersion: "engine.openmcp.cloud/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: "sim" },
    spec: { backend: "simulated", ...(settings ? { settings } : {}) },
  }) as ProviderConfig;

const run = (status?: Rollout["status"]) =>
  fleetRollout(
    { settings: { providerConfig: "sim", patch: { runtimeConfig: "api/beta=true", old: null } } },
    status,
  );

const reached = (by = "r/rollout-uid"): Cluster => {
  const cluster = fleetCluster("a", "1.34.0");
  return {
    ...cluster,
    metadata: { ...cluster.metadata, annotations: { "engine.openmcp.cloud/settings-from-rollout": by } },
  };
};

describe("mergeSettings", () => {
  it("merges objects key by key, replaces the rest and removes keys set to null (RFC 7386)", () => {
    expect(
      mergeSettings(
        { keep: 1, old: "x", nested: { a: 1, b: 2 }, list: [1, 2] },
        { old: null, nested: { b: null, c: 3 }, list: [3], added: "y" },
      ),
    ).toEqual({ keep: 1, nested: { a: 1, c: 3 }, list: [3], added: "y" });
  });

  it("is idempotent: the patch over settings that hold it changes nothing", () => {
    const patch = { runtimeConfig: "api/beta=true", old: null };
    const once = mergeSettings({ old: 1, other: 2 }, patch);
    expect(mergeSettings(once, patch)).toEqual(once);
  });
});

describe("settingsHash", () => {
  it("is the same for equal settings in any key order, and for absent and empty ones", () => {
    expect(settingsHash({ a: 1, b: { c: 2, d: 3 } })).toBe(settingsHash({ b: { d: 3, c: 2 }, a: 1 }));
    expect(settingsHash(undefined)).toBe(settingsHash({}));
    expect(settingsHash({ a: 1 })).not.toBe(settingsHash({ a: 2 }));
    expect(settingsHash({ a: 1 })).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe("clusterSettings: the one decision of a Cluster's settings", () => {
  const own = { old: "x", oidc: "pem" };

  it("gives a Cluster the run did not reach its config's own settings", () => {
    expect(clusterSettings(fleetCluster("a", "1.34.0"), config(own), [run()])).toEqual(own);
  });

  it("gives a Cluster the run reached the run's patch over its config's settings", () => {
    expect(clusterSettings(reached(), config(own), [run()])).toEqual({
      oidc: "pem",
      runtimeConfig: "api/beta=true",
    });
  });

  it("keeps them for a halted or aborted run (nothing is taken back behind a person's back)", () => {
    for (const phase of ["Halted", "Aborted"])
      expect(clusterSettings(reached(), config(own), [run({ phase })])).toEqual({
        oidc: "pem",
        runtimeConfig: "api/beta=true",
      });
  });

  it("gives the config's own once the run gave the config its settings, or is gone, or is another run", () => {
    expect(
      clusterSettings(reached(), config(own), [
        run({ settings: { providerConfig: "sim", from: "a", to: "b", appliedAt: "2026-01-01T00:00:00Z" } }),
      ]),
    ).toEqual(own);
    expect(clusterSettings(reached(), config(own), [])).toEqual(own);
    expect(clusterSettings(reached("r/another-uid"), config(own), [run()])).toEqual(own);
  });

  it("leaves a Cluster of another config alone", () => {
    const other = { ...config(own), metadata: { name: "other" } } as ProviderConfig;
    expect(clusterSettings(reached(), other, [run()])).toEqual(own);
  });
});
