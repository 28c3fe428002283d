import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { JsonObject } from "../../../../src/api/common.ts";
import { kindClusterConfig, kindExtraMounts } from "../../../../src/providers/kind/cluster-config.ts";

describe("kind settings.extraMounts", () => {
  const platform: JsonObject = {
    extraMounts: [
      { hostPath: "/var/run/docker.sock", containerPath: "/var/run/host-docker.sock" },
      { hostPath: "/var/lib/openmcp-engine", containerPath: "/var/lib/openmcp-engine", readOnly: false },
    ],
  };

  it("mounts the listed host paths into the node beside the OIDC trust folder", () => {
    const mounts = kindExtraMounts(platform, "kind-platform");
    expect(mounts).toEqual([
      { hostPath: "/var/run/docker.sock", containerPath: "/var/run/host-docker.sock" },
      { hostPath: "/var/lib/openmcp-engine", containerPath: "/var/lib/openmcp-engine" },
    ]);
    const config = parse(kindClusterConfig("/state/clusters/omc-1/authn", mounts));
    expect(config.nodes[0].extraMounts).toEqual([
      {
        hostPath: "/state/clusters/omc-1/authn",
        containerPath: "/etc/kubernetes/openmcp-authn",
        readOnly: true,
      },
      ...mounts,
    ]);
  });

  it("has none unless asked", () => {
    expect(kindExtraMounts(undefined)).toEqual([]);
    expect(kindExtraMounts({ images: {} })).toEqual([]);
    expect(parse(kindClusterConfig("/a")).nodes[0].extraMounts).toHaveLength(1);
  });

  it("refuses what is not a list of absolute paths, naming the ProviderConfig and the entry", () => {
    expect(() => kindExtraMounts({ extraMounts: "/var/run/docker.sock" }, "kind")).toThrow(
      /^ProviderConfig kind: settings.extraMounts must be a list, e.g. /,
    );
    expect(() =>
      kindExtraMounts({ extraMounts: [{ hostPath: "docker.sock", containerPath: "/x" }] }, "kind"),
    ).toThrow(/^ProviderConfig kind: settings.extraMounts\[0\] needs an absolute hostPath and containerPath/);
    expect(() =>
      kindExtraMounts({ extraMounts: [{ hostPath: "/a", containerPath: "/b", readOnly: "yes" }] }),
    ).toThrow("settings.extraMounts[0].readOnly must be true or false");
  });
});
