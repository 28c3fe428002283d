/** Which Clusters are ours: the profile decides when it exists; its name's shape and the provider label when it does not. */
import { describe, expect, it } from "vitest";
import { LABELS } from "../../../../src/api/constants.ts";
import { profileReference } from "../../../../src/machines/cluster-profile/profile-reference.ts";
import { aClusterProfile } from "../../../support/builders.ts";

const US = { providerName: "kind", environment: "dev", claimedProfiles: new Set<string>() } as const;

describe("profileReference", () => {
  it("follows an existing profile's provider, whatever the name or label says", () => {
    const ours = aClusterProfile({ provider: "kind", environment: "dev", config: "default" });
    const theirs = aClusterProfile({ provider: "gardener", environment: "dev", config: "default" });
    const labelledElsewhere = { [LABELS.provider]: "gardener" };
    expect(profileReference({ profileName: "dev.kind.default", labels: labelledElsewhere }, ours, US)).toBe(
      "ours",
    );
    expect(profileReference({ profileName: "dev.kind.default" }, theirs, US)).toBe("foreign");
  });

  it("calls a missing profile of our shape ours to report on, unless a label names another provider", () => {
    expect(profileReference({ profileName: "dev.kind.typo" }, undefined, US)).toBe("missing");
    expect(
      profileReference(
        { profileName: "dev.kind.typo", labels: { [LABELS.provider]: "kind" } },
        undefined,
        US,
      ),
    ).toBe("missing");
    expect(
      profileReference(
        { profileName: "dev.kind.typo", labels: { [LABELS.provider]: "other" } },
        undefined,
        US,
      ),
    ).toBe("foreign");
  });

  it("calls a missing profile of any name ours on the engine's own kinds, unless another engine labelled it first", () => {
    expect(profileReference({ profileName: "tpyo" }, undefined, US, true)).toBe("missing");
    expect(profileReference({ profileName: "tpyo" }, undefined, US)).toBe("foreign"); // an openMCP Cluster
    expect(
      profileReference({ profileName: "tpyo", labels: { [LABELS.provider]: "other" } }, undefined, US, true),
    ).toBe("foreign");
    const theirs = aClusterProfile({ provider: "gardener", environment: "dev", config: "default" });
    expect(profileReference({ profileName: "dev.gardener.default" }, theirs, US, true)).toBe("foreign");
  });

  it("leaves openMCP's workspace Cluster and other shapes alone", () => {
    const workspace = {
      profileName: "kcp-workspace",
      labels: { [LABELS.provider]: "openmcp-workspace-runtime" },
    };
    expect(profileReference(workspace, undefined, US)).toBe("foreign");
    expect(profileReference({ profileName: "kcp-workspace" }, undefined, US)).toBe("foreign");
    // Another environment of the same provider, or a provider whose name starts like ours.
    expect(profileReference({ profileName: "prod.kind.default" }, undefined, US)).toBe("foreign");
    expect(profileReference({ profileName: "dev.kind-2.default" }, undefined, US)).toBe("foreign");
    expect(profileReference({ profileName: undefined }, undefined, US)).toBe("foreign");
  });

  it("calls a missing profile a ProviderConfig of ours names in spec.profileName ours to report on", () => {
    const claiming = { ...US, claimedProfiles: new Set(["kind"]) };
    expect(profileReference({ profileName: "kind" }, undefined, claiming)).toBe("missing");
    // Still ours-shaped names, and unknown names stay another's.
    expect(profileReference({ profileName: "dev.kind.default" }, undefined, claiming)).toBe("missing");
    expect(profileReference({ profileName: "gardener" }, undefined, claiming)).toBe("foreign");
    expect(profileReference({ profileName: "kind-2" }, undefined, claiming)).toBe("foreign");
    // A label naming another provider wins, as for our shape.
    expect(
      profileReference({ profileName: "kind", labels: { [LABELS.provider]: "other" } }, undefined, claiming),
    ).toBe("foreign");
  });

  it("leaves a missing profile named like a claimed one alone when no config of ours claims it", () => {
    expect(profileReference({ profileName: "kind" }, undefined, US)).toBe("foreign");
  });

  it("follows an existing profile of a claimed name: another provider's is foreign", () => {
    const claiming = { ...US, claimedProfiles: new Set(["kind"]) };
    const theirs = aClusterProfile({ provider: "openmcp-kind", name: "kind" });
    const ours = aClusterProfile({ provider: "kind", name: "kind" });
    expect(profileReference({ profileName: "kind" }, theirs, claiming)).toBe("foreign");
    expect(profileReference({ profileName: "kind" }, ours, claiming)).toBe("ours");
  });
});
