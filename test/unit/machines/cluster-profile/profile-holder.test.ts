/** Who holds the ClusterProfile a ProviderConfig would publish: free, the config itself, another provider or another config. */
import { describe, expect, it } from "vitest";
import type { ClusterProfile } from "../../../../src/api/cluster-profile.ts";
import { PROVIDER_CONFIG_LABELS } from "../../../../src/api/constants/provider-config.ts";
import { LABELS } from "../../../../src/api/constants.ts";
import {
  profileHolder,
  profileTaken,
  profileTakenMessage,
} from "../../../../src/machines/cluster-profile/profile-holder.ts";
import { aClusterProfile } from "../../../support/builders.ts";

/** Profile `kind` made by `provider` for `config`, with the labels our engine sets unless `labels` says otherwise. */
function kindProfile(
  provider: string,
  config: string,
  labels: Record<string, string> | undefined = {
    [LABELS.provider]: provider,
    [PROVIDER_CONFIG_LABELS.providerConfig]: config,
  },
): ClusterProfile {
  const profile = aClusterProfile({ name: "kind", provider, config });
  return { ...profile, metadata: { ...profile.metadata, ...(labels ? { labels } : {}) } };
}

describe("profileHolder", () => {
  it("finds a name nobody holds free", () => {
    expect(profileHolder(undefined, "default", "sim")).toEqual({ kind: "free" });
  });

  it("finds our profile for this config ours", () => {
    expect(profileHolder(kindProfile("sim", "default"), "default", "sim")).toEqual({ kind: "ours" });
  });

  it("finds an unlabelled profile naming us and this config in its spec ours (openMCP's kind provider's own shape)", () => {
    expect(profileHolder(kindProfile("kind", "kind", undefined), "kind", "kind")).toEqual({ kind: "ours" });
  });

  it("finds another provider's profile taken by that provider, by its providerRef or its label", () => {
    expect(profileHolder(kindProfile("kind", "kind", undefined), "default", "sim")).toEqual({
      kind: "provider",
      provider: "kind",
    });
    const relabelled = kindProfile("sim", "default", { [LABELS.provider]: "other" });
    expect(profileHolder(relabelled, "default", "sim")).toEqual({ kind: "provider", provider: "other" });
  });

  it("finds our profile made for another config taken by that config, by its label before its spec", () => {
    expect(profileHolder(kindProfile("sim", "first"), "second", "sim")).toEqual({
      kind: "config",
      config: "first",
    });
    const unlabelled = kindProfile("sim", "first", { [LABELS.provider]: "sim" });
    expect(profileHolder(unlabelled, "second", "sim")).toEqual({ kind: "config", config: "first" });
    const labelledElsewhere = kindProfile("sim", "second", {
      [LABELS.provider]: "sim",
      [PROVIDER_CONFIG_LABELS.providerConfig]: "first",
    });
    expect(profileHolder(labelledElsewhere, "second", "sim")).toEqual({ kind: "config", config: "first" });
  });
});

describe("profileTaken and its message", () => {
  it("calls only another's hold taken", () => {
    expect(profileTaken({ kind: "free" })).toBe(false);
    expect(profileTaken({ kind: "ours" })).toBe(false);
    expect(profileTaken({ kind: "provider", provider: "kind" })).toBe(true);
    expect(profileTaken({ kind: "config", config: "first" })).toBe(true);
  });

  it("names the profile, its holder and what to do", () => {
    expect(profileTakenMessage("kind", { kind: "provider", provider: "kind" })).toBe(
      'ClusterProfile kind belongs to provider "kind", so this config publishes no profile; create a ProviderConfig with another spec.profileName instead (the field cannot be changed once set), or remove that provider\'s profile',
    );
    expect(profileTakenMessage("kind", { kind: "config", config: "first" })).toBe(
      'ClusterProfile kind is held by ProviderConfig "first" of this provider, so this config publishes no profile; delete ProviderConfig "first" to hand the profile over, or create a ProviderConfig with another spec.profileName instead (the field cannot be changed once set)',
    );
  });
});
