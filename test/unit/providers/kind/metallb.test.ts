/** MetalLB on kind: the option, the images, the pool slices of the kind network, the condition. */
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  dockerNetworkAddresses,
  METALLB_IMAGES,
  METALLB_VERSION,
  metallbCondition,
  metallbOption,
  metallbPoolManifest,
  metallbPoolRange,
} from "../../../../src/providers/kind/metallb.ts";

describe("metallbOption", () => {
  it("is off when absent or false, on for true, and refuses anything else", () => {
    expect(metallbOption(undefined)).toBe(false);
    expect(metallbOption("false")).toBe(false);
    expect(metallbOption("true")).toBe(true);
    expect(() => metallbOption("yes")).toThrow(/must be true or false/);
  });

  it("names the images hack/metallb/build.sh makes, as the release's manifest does", () => {
    expect(METALLB_IMAGES).toEqual({
      controller: `quay.io/metallb/controller:${METALLB_VERSION}`,
      speaker: `quay.io/metallb/speaker:${METALLB_VERSION}`,
    });
  });
});

describe("metallbPoolRange", () => {
  it("gives the node with host number k the k-th block of 8 counted down from the top of the subnet", () => {
    expect(metallbPoolRange("172.18.0.0/16", "172.18.0.1")).toEqual({
      first: "172.18.255.247",
      last: "172.18.255.254",
    });
    expect(metallbPoolRange("172.18.0.0/16", "172.18.0.2")).toEqual({
      first: "172.18.255.239",
      last: "172.18.255.246",
    });
    expect(metallbPoolRange("172.18.0.0/16", "172.18.1.3")).toEqual({
      first: "172.18.247.231",
      last: "172.18.247.238",
    });
  });

  it("never gives two node addresses overlapping pools, nor a pool holding any node address up to them", () => {
    const ranges = Array.from({ length: 100 }, (_, i) =>
      metallbPoolRange("10.89.0.0/22", `10.89.${Math.floor((i + 2) / 256)}.${(i + 2) % 256}`),
    );
    const number = (a: string) => a.split(".").reduce((sum, part) => sum * 256 + Number(part), 0);
    const spans = ranges.map((r) => [number(r.first), number(r.last)] as const);
    for (const [i, [low, high]] of spans.entries()) {
      expect(high - low).toBe(7);
      expect(low).toBeGreaterThan(number("10.89.0.0") + 101);
      for (const [j, [otherLow, otherHigh]] of spans.entries())
        if (i !== j) expect(high < otherLow || low > otherHigh).toBe(true);
    }
  });

  it("refuses a subnet with no room above the node, an address that is not a host of it, and a taken address", () => {
    expect(() => metallbPoolRange("172.18.0.0/24", "172.18.0.40")).toThrow(/no room for a pool/);
    expect(() => metallbPoolRange("172.18.0.0/16", "172.19.0.2")).toThrow(/not a host of/);
    expect(() => metallbPoolRange("fc00::/64", "172.18.0.2")).toThrow(/not an IPv4 CIDR/);
    expect(() => metallbPoolRange("172.18.0.0/16", "172.18.0.2", ["172.18.0.3", "172.18.255.240"])).toThrow(
      /172\.18\.255\.240 on the kind network lies in the pool 172\.18\.255\.239-172\.18\.255\.246/,
    );
  });
});

describe("dockerNetworkAddresses", () => {
  it("reads the IPv4 subnet and every IPv4 address on the network, the gateway's too", () => {
    const inspected = JSON.stringify({
      IPAM: {
        Config: [
          { Subnet: "fc00:f853:ccd:e793::/64", Gateway: "fc00:f853:ccd:e793::1" },
          { Subnet: "172.18.0.0/16", Gateway: "172.18.0.1" },
        ],
      },
      Containers: { a: { IPv4Address: "172.18.0.2/16" }, b: { IPv4Address: "" } },
    });
    expect(dockerNetworkAddresses(inspected)).toEqual({
      subnet: "172.18.0.0/16",
      gateway: "172.18.0.1",
      addresses: ["172.18.0.2", "172.18.0.1"],
    });
    expect(() => dockerNetworkAddresses(JSON.stringify({ IPAM: { Config: [] } }))).toThrow(/no IPv4 subnet/);
  });

  it("takes the subnet's first host as the gateway of a network made with --subnet and no --gateway (none recorded)", () => {
    const inspected = JSON.stringify({
      IPAM: { Config: [{ Subnet: "172.19.0.0/16" }, { Subnet: "fc00:f853:ccd:e793::/64" }] },
      Containers: { a: { IPv4Address: "172.19.0.2/16" } },
    });
    expect(dockerNetworkAddresses(inspected)).toEqual({
      subnet: "172.19.0.0/16",
      gateway: "172.19.0.1",
      addresses: ["172.19.0.2", "172.19.0.1"],
    });
  });
});

describe("metallbPoolManifest", () => {
  it("is an IPAddressPool with the range and an L2Advertisement of it, in metallb-system", () => {
    const objects = parseAllDocuments(
      metallbPoolManifest({ first: "172.18.255.239", last: "172.18.255.246" }),
    ).map((document) => document.toJSON());
    expect(objects).toEqual([
      {
        apiVersion: "metallb.io/v1beta1",
        kind: "IPAddressPool",
        metadata: { name: "kind-network", namespace: "metallb-system" },
        spec: { addresses: ["172.18.255.239-172.18.255.246"] },
      },
      {
        apiVersion: "metallb.io/v1beta1",
        kind: "L2Advertisement",
        metadata: { name: "kind-network", namespace: "metallb-system" },
        spec: { ipAddressPools: ["kind-network"] },
      },
    ]);
  });
});

describe("metallbCondition", () => {
  it("is True once installed, False naming what failed, Unknown while installing", () => {
    expect(metallbCondition({ kind: "succeeded" }, "a-b")).toEqual({
      type: "MetalLBReady",
      status: "True",
      reason: "Installed",
      message: "MetalLB gives LoadBalancer Services addresses from a-b on the kind network",
    });
    expect(metallbCondition({ kind: "failed", message: "loading the images failed" }, undefined)).toEqual({
      type: "MetalLBReady",
      status: "False",
      reason: "InstallFailed",
      message: "loading the images failed",
    });
    expect(metallbCondition({ kind: "running" }, "a-b")).toMatchObject({
      status: "Unknown",
      reason: "Installing",
    });
    expect(metallbCondition({ kind: "absent" }, undefined)).toMatchObject({ status: "Unknown" });
  });
});
