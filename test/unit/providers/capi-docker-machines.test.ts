/** Reading Cluster API's Docker machines as `docker inspect` prints them. */
import { describe, expect, it } from "vitest";
import { parseMachine } from "../../../src/providers/capi-docker-machines.ts";

describe("a Docker machine from docker inspect", () => {
  it("has its name, role and addresses by network while it runs, and none once stopped", () => {
    const networks = {
      kind: {
        IPAddress: "172.18.0.5",
        GlobalIPv6Address: "fc00:f853:ccd:e793::5",
        MacAddress: "02:42:ac:12:00:05",
      },
    };
    expect(parseMachine(JSON.stringify(["/capit-one-lb", true, "external-load-balancer", networks]))).toEqual(
      {
        name: "capit-one-lb",
        role: "external-load-balancer",
        running: true,
        addresses: { kind: { ipv4: "172.18.0.5", ipv6: "fc00:f853:ccd:e793::5" } },
      },
    );
    const stopped = { kind: { IPAddress: "", GlobalIPv6Address: "" } };
    expect(parseMachine(JSON.stringify(["/capit-one-cp-abc", false, "control-plane", stopped]))).toEqual({
      name: "capit-one-cp-abc",
      role: "control-plane",
      running: false,
      addresses: {},
    });
    expect(parseMachine(JSON.stringify(["/other", true, null, null]))).toMatchObject({
      role: "",
      addresses: {},
    });
  });
});
