import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { JsonObject } from "../../../../src/api/common.ts";
import {
  kindClusterConfig,
  kindExtraMounts,
  localNodeImageVersions,
  newestMinorKindCreates,
} from "../../../../src/providers/kind/cluster-config.ts";

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

describe("the node images a kind backend offers", () => {
  const held = [
    "kindest/node:v1.36.3",
    "docker.io/kindest/node:v1.37.2",
    "kindest/node:v1.34.0",
    "kindest/node:latest",
    "kindest/haproxy:v20230606-42a2262b",
  ].join("\n");

  it("offers every kindest/node version the host holds, newest first, when no limit is known", () => {
    expect(localNodeImageVersions(held).map((v) => v.version)).toEqual(["1.37.2", "1.36.3", "1.34.0"]);
  });

  it("leaves out the releases its kind cannot create: kind v0.30 writes kubeadm's v1beta3, refused from 1.37 on", () => {
    const newest = newestMinorKindCreates("kind v0.30.0 go1.26.8 linux/amd64\n");
    expect(newest).toBe(36);
    expect(localNodeImageVersions(held, newest).map((v) => v.version)).toEqual(["1.36.3", "1.34.0"]);
    expect(newestMinorKindCreates("kind v0.29.0 go1.24.2 linux/amd64")).toBe(36);
    // A later kind, or output this engine does not read: no limit.
    expect(newestMinorKindCreates("kind v0.31.0 go1.26.0 linux/amd64")).toBeUndefined();
    expect(newestMinorKindCreates("")).toBeUndefined();
  });
});
