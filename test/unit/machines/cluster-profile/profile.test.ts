/** The ClusterProfile a ProviderConfig yields: its name, labels, versions and the traits annotation, and when a stored one is up to date. */
import { describe, expect, it } from "vitest";
import type { ClusterProfile } from "../../../../src/api/cluster-profile.ts";
import { PROVIDER_CONFIG_LABELS } from "../../../../src/api/constants/provider-config.ts";
import { ANNOTATIONS, LABELS } from "../../../../src/api/constants.ts";
import {
  desiredClusterProfile,
  type ProfileOwner,
  profileName,
  profileUpToDate,
  providerConfigEvent,
  providerConfigStatus,
} from "../../../../src/machines/cluster-profile/profile.ts";
import { aProviderConfig } from "../../../support/builders.ts";

const owner: ProfileOwner = { providerName: "sim", environment: "dev", backends: ["simulated"] };
const config = aProviderConfig({ name: "small" });
const NOW = "2026-11-27T00:00:00Z";
const versions = [{ version: "1.33.3" }, { version: "1.32.7", deprecated: true }];

/** The profile as the API server would return it: `desired` plus server-set metadata and other writers' annotations. */
function stored(desired: ClusterProfile, annotations: Record<string, string> = {}): ClusterProfile {
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      resourceVersion: "7",
      uid: "0b5e5a9e-0c55-4d8e-9a55-2f8f4a1c2d3e",
      annotations: { ...desired.metadata.annotations, ...annotations },
    },
  };
}

describe("desiredClusterProfile", () => {
  it("names the profile <environment>.<provider>.<config> and labels it with both", () => {
    const profile = desiredClusterProfile(config, owner, versions, []);

    expect(profile.metadata.name).toBe("dev.sim.small");
    expect(profile.metadata.labels).toEqual({
      [LABELS.provider]: "sim",
      [PROVIDER_CONFIG_LABELS.providerConfig]: "small",
    });
    expect(profile.spec).toEqual({
      providerRef: { name: "sim" },
      providerConfigRef: { name: "small" },
      supportedVersions: [{ version: "1.33.3" }, { version: "1.32.7", deprecated: true }],
    });
  });

  it("names the profile spec.profileName when the config gives one, labelled as any other", () => {
    const named = aProviderConfig({ name: "small", profileName: "kind" });
    const profile = desiredClusterProfile(named, owner, versions, []);

    expect(profile.metadata.name).toBe("kind");
    expect(profileName(owner, named)).toBe("kind");
    expect(profileName(owner, config)).toBe("dev.sim.small");
    expect(profile.metadata.labels).toEqual({
      [LABELS.provider]: "sim",
      [PROVIDER_CONFIG_LABELS.providerConfig]: "small",
    });
    expect(profile.spec.providerConfigRef).toEqual({ name: "small" });
  });

  it("publishes the traits in the traits annotation, each once, sorted and comma-separated", () => {
    const profile = desiredClusterProfile(config, owner, versions, [
      "zone/eu",
      "cluster.openmcp.cloud/workerless",
      "zone/eu",
    ]);

    expect(profile.metadata.annotations).toEqual({
      [ANNOTATIONS.traits]: "cluster.openmcp.cloud/workerless,zone/eu",
    });
  });

  it("leaves the annotation out when the backend offers no traits", () => {
    const profile = desiredClusterProfile(config, owner, versions, []);

    expect(profile.metadata.annotations).toBeUndefined();
  });

  it("writes the same annotation whatever the order the backend lists its traits in", () => {
    const one = desiredClusterProfile(config, owner, versions, ["b", "a", "c"]);
    const other = desiredClusterProfile(config, owner, versions, ["c", "b", "a"]);

    expect(one.metadata.annotations).toEqual(other.metadata.annotations);
  });
});

describe("profileUpToDate", () => {
  const withTraits = desiredClusterProfile(config, owner, versions, ["a", "b"]);

  it("holds for the stored copy of the desired profile, whatever other annotations it carries", () => {
    expect(profileUpToDate(stored(withTraits, { "example.com/note": "kept" }), withTraits)).toBe(true);
  });

  it("fails when there is no stored profile", () => {
    expect(profileUpToDate(undefined, withTraits)).toBe(false);
  });

  it("fails when the config's traits changed", () => {
    const now = desiredClusterProfile(config, owner, versions, ["a", "c"]);

    expect(profileUpToDate(stored(withTraits), now)).toBe(false);
  });

  it("fails when the traits are gone but the stored profile still announces them", () => {
    const now = desiredClusterProfile(config, owner, versions, []);

    expect(profileUpToDate(stored(withTraits), now)).toBe(false);
  });

  it("fails when the stored profile lacks the traits annotation the desired one has", () => {
    const before = desiredClusterProfile(config, owner, versions, []);

    expect(profileUpToDate(stored(before), withTraits)).toBe(false);
  });

  it("fails when the offered versions changed", () => {
    const now = desiredClusterProfile(config, owner, [{ version: "1.33.3" }], ["a", "b"]);

    expect(profileUpToDate(stored(withTraits), now)).toBe(false);
  });

  it("fails when one of its labels was changed", () => {
    const relabelled = stored(withTraits);
    const changed = {
      ...relabelled,
      metadata: { ...relabelled.metadata, labels: { ...relabelled.metadata.labels, [LABELS.provider]: "x" } },
    };

    expect(profileUpToDate(changed, withTraits)).toBe(false);
  });
});

describe("providerConfigStatus", () => {
  it("keeps the pool controller's part of the status as it stands (two writers, each of its own fields)", () => {
    const pools = { warm: { idle: 2, binding: 0, refilling: 0, ready: true } };
    const withPools = { ...config, status: { pools } };
    const status = providerConfigStatus(withPools, owner, versions, "2026-11-27T00:00:00Z");
    expect(status.pools).toEqual(pools);
    expect(status.profileName).toBe("dev.sim.small");
    expect(providerConfigStatus(config, owner, versions, "2026-11-27T00:00:00Z").pools).toBeUndefined();
  });

  it("says Ready=False ProfileNameTaken, naming the holder, when the profile's name is taken", () => {
    const named = aProviderConfig({ name: "second", profileName: "kind" });
    const byConfig = providerConfigStatus(named, owner, versions, "2026-11-27T00:00:00Z", undefined, {
      kind: "config",
      config: "first",
    });
    expect(byConfig.profileName).toBe("kind");
    expect(byConfig.conditions).toEqual([
      expect.objectContaining({
        type: "Ready",
        status: "False",
        reason: "ProfileNameTaken",
        message: expect.stringMatching(
          /^ClusterProfile kind is held by ProviderConfig "first" of this provider.*delete ProviderConfig "first"/,
        ),
      }),
    ]);
    const byProvider = providerConfigStatus(named, owner, versions, "2026-11-27T00:00:00Z", undefined, {
      kind: "provider",
      provider: "kind",
    });
    expect(byProvider.conditions?.[0]?.message).toMatch(/^ClusterProfile kind belongs to provider "kind"/);
  });

  it("names no profile while it makes none: a backend it cannot reach, settings the backend refuses", () => {
    const refused = providerConfigStatus(config, owner, undefined, NOW, "settings.zone must be a string");
    expect(refused.profileName).toBeUndefined();
    expect(refused.conditions?.[0]).toMatchObject({
      status: "False",
      reason: "ConfigurationProblem",
      message: "settings.zone must be a string; no ClusterProfile is made",
    });
    const elsewhere = aProviderConfig({ name: "small", backend: "kind" });
    expect(providerConfigStatus(elsewhere, owner, versions, NOW).profileName).toBeUndefined();
  });

  it("tells a person when Ready turns False (a Warning with its reason) and when it is True again", () => {
    const ready = providerConfigStatus(config, owner, versions, NOW);
    const broken = providerConfigStatus({ ...config, status: ready }, owner, undefined, NOW, "bad settings");
    expect(providerConfigEvent(undefined, ready)).toBeUndefined(); // the first Ready is no news
    expect(providerConfigEvent(ready, broken)).toEqual({
      type: "Warning",
      reason: "ConfigurationProblem",
      message: "bad settings; no ClusterProfile is made",
    });
    expect(providerConfigEvent(broken, broken)).toBeUndefined(); // told once
    const fixed = providerConfigStatus({ ...config, status: broken }, owner, versions, NOW);
    expect(providerConfigEvent(broken, fixed)).toMatchObject({ type: "Normal", reason: "Ready" });
    expect(providerConfigEvent(undefined, broken)?.type).toBe("Warning"); // broken from the start
  });

  it("says Ready=True when the config holds its profile or the name is free", () => {
    for (const kind of ["ours", "free"] as const) {
      const status = providerConfigStatus(config, owner, versions, "2026-11-27T00:00:00Z", undefined, {
        kind,
      });
      expect(status.conditions?.[0]).toMatchObject({ status: "True", reason: "Ready" });
    }
  });
});
