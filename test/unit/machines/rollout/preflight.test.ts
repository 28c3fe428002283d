/**
 * A rollout's preflight, pure: the metric text parsed, each check's verdict on one Cluster (offered, skew, deprecated
 * APIs, and what could not be looked at), and the step holding a stage while a check blocks it.
 */
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../../src/api/cluster.ts";
import type { Rollout, RolloutSpec } from "../../../../src/api/rollout.ts";
import { parseDeprecatedApis } from "../../../../src/machines/rollout/deprecated-apis.ts";
import {
  type DeprecatedApiRead,
  preflightCandidates,
  preflightCondition,
  preflightOf,
} from "../../../../src/machines/rollout/preflight.ts";
import { stepRollout } from "../../../../src/machines/rollout/step.ts";
import { Fleet, fleetCluster, fleetProfile, fleetRollout } from "../../../support/rollout-fleet.ts";
import { RUN_T0, RUN_TIMING } from "../../../support/rollout-runs.ts";

/** As kube-apiserver 1.36.3 printed it after requests of these APIs (one line per subresource too). */
const METRICS = `# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.
# TYPE apiserver_requested_deprecated_apis gauge
apiserver_requested_deprecated_apis{group="",removed_release="",resource="componentstatuses",subresource="",version="v1"} 1
apiserver_requested_deprecated_apis{group="networking.k8s.io",removed_release="1.37",resource="servicecidrs",subresource="",version="v1beta1"} 1
apiserver_requested_deprecated_apis{group="networking.k8s.io",removed_release="1.37",resource="servicecidrs",subresource="status",version="v1beta1"} 1
apiserver_requested_deprecated_apis{group="resource.k8s.io",removed_release="1.38",resource="deviceclasses",subresource="",version="v1beta1"} 1
apiserver_requested_deprecated_apis_other{group="x",removed_release="1.0",resource="y",version="v1"} 1
apiserver_request_total{code="200"} 5
`;

const read = (text: string): DeprecatedApiRead => ({ kind: "read", apis: parseDeprecatedApis(text) });
const clean: DeprecatedApiRead = { kind: "read", apis: [] };
const at = (version: string | undefined): Cluster => {
  const cluster = fleetCluster("c1", version ?? "");
  return version ? cluster : ({ ...cluster, spec: { ...cluster.spec, kubernetes: {} } } as Cluster);
};
const reasons = (spec: RolloutSpec, cluster: Cluster, deprecated?: DeprecatedApiRead, versions?: string[]) =>
  preflightOf(spec, {
    cluster,
    profile: fleetProfile(versions ?? ["1.36.3", "1.37.0", "1.38.1"]),
    deprecated,
  }).map((finding) => [finding.reason, finding.blocks]);

describe("the metric apiserver_requested_deprecated_apis", () => {
  it("gives each requested API once, with its removal release ('' when none is planned), and nothing else", () => {
    expect(parseDeprecatedApis(METRICS)).toEqual([
      { group: "", version: "v1", resource: "componentstatuses", removedRelease: "" },
      { group: "networking.k8s.io", version: "v1beta1", resource: "servicecidrs", removedRelease: "1.37" },
      { group: "resource.k8s.io", version: "v1beta1", resource: "deviceclasses", removedRelease: "1.38" },
    ]);
    expect(parseDeprecatedApis(METRICS.replaceAll("} 1", "} 0"))).toEqual([]);
  });
});

describe("the checks of one Cluster", () => {
  it("pass for an offered version one minor up on a cluster requesting no API it removes", () => {
    expect(
      reasons({ version: "1.37.0" }, at("1.36.3"), read(METRICS.replaceAll('"1.37"', '"1.38"'))),
    ).toEqual([]);
    expect(reasons({ version: "1.37" }, at("1.36"), clean)).toEqual([]); // partial versions: any patch
    expect(reasons({ version: "1.36.3" }, at("1.36.3"), clean)).toEqual([]); // the same version: no skew
  });

  it("block a version the profile does not offer, and a missing profile", () => {
    expect(reasons({ version: "1.37.5" }, at("1.36.3"), clean)).toEqual([["VersionNotOffered", true]]);
    const missing = preflightOf(
      { version: "1.37.0" },
      { cluster: at("1.36.3"), profile: undefined, deprecated: clean },
    );
    expect(missing).toEqual([
      expect.objectContaining({
        reason: "VersionNotOffered",
        message: "Cluster c1: its ClusterProfile p does not exist, so nothing offers 1.37.0",
      }),
    ]);
    const [offered] = preflightOf(
      { version: "1.39.0" },
      { cluster: at("1.38.1"), profile: fleetProfile(["1.38.1"]), deprecated: clean },
    );
    expect(offered?.message).toBe("Cluster c1: ClusterProfile p does not offer 1.39.0 (it offers 1.38.1)");
  });

  it("block a downgrade and a jump of more than one minor, and only note a Cluster that names no version", () => {
    expect(reasons({ version: "1.36.3" }, at("1.37.0"), clean)).toEqual([["VersionSkew", true]]);
    expect(reasons({ version: "1.38.1" }, at("1.36.3"), clean)).toEqual([["VersionSkew", true]]);
    expect(reasons({ version: "1.37.0" }, at(undefined), clean)).toEqual([["VersionSkewNotChecked", false]]);
    const [skew] = preflightOf(
      { version: "1.38.1" },
      { cluster: at("1.36.3"), profile: fleetProfile(["1.38.1"]), deprecated: clean },
    );
    expect(skew?.message).toMatch(/^Cluster c1 is at 1\.36\.3: 1\.38\.1 is more than one minor above it/);
  });

  it("block an API removed at or before the target's minor, naming it and the Cluster; not one removed later", () => {
    // 1.37 is servicecidrs' removal release: blocked; deviceclasses (1.38) and componentstatuses (none) are not.
    const [blocked] = preflightOf(
      { version: "1.37.0" },
      { cluster: at("1.36.3"), profile: fleetProfile(["1.37.0"]), deprecated: read(METRICS) },
    );
    expect(blocked?.message).toBe(
      "Cluster c1's API server was asked for networking.k8s.io/v1beta1 servicecidrs (removed in 1.37), which 1.37.0 no longer serves",
    );
    expect(reasons({ version: "1.36.3" }, at("1.36.3"), read(METRICS))).toEqual([]);
    const findings = preflightOf(
      { version: "1.38.1" },
      { cluster: at("1.37.0"), profile: fleetProfile(["1.38.1"]), deprecated: read(METRICS) },
    );
    expect(findings).toEqual([
      {
        cluster: "c1",
        reason: "DeprecatedAPIsInUse",
        blocks: true,
        message:
          "Cluster c1's API server was asked for networking.k8s.io/v1beta1 servicecidrs (removed in 1.37), resource.k8s.io/v1beta1 deviceclasses (removed in 1.38), which 1.38.1 no longer serves",
      },
    ]);
  });

  it("name a Cluster whose API server could not be read; blocking only when spec.preflight requires the check", () => {
    const none: DeprecatedApiRead = { kind: "unavailable", why: "backend simulated gives no admin access" };
    expect(reasons({ version: "1.37.0" }, at("1.36.3"), none)).toEqual([["DeprecatedAPIsNotChecked", false]]);
    expect(reasons({ version: "1.37.0" }, at("1.36.3"), undefined)).toEqual([
      ["DeprecatedAPIsNotChecked", false],
    ]);
    expect(
      reasons({ version: "1.37.0", preflight: { requireDeprecatedAPICheck: true } }, at("1.36.3"), none),
    ).toEqual([["DeprecatedAPIsNotChecked", true]]);
  });
});

describe("a stage behind its preflight", () => {
  const OLD = "1.36.3";
  const NEW = "1.37.0";
  const profiles = [fleetProfile([OLD, NEW])];
  const names = ["c0", "c1", "c2", "c3"];
  const fleetOf = () => new Fleet(names.map((name) => fleetCluster(name, OLD)));

  /** Steps until nothing more is asked, each Cluster Ready at what it was asked, with these API server reads. */
  function settle(fleet: Fleet, rollout: Rollout, reads: ReadonlyMap<string, DeprecatedApiRead>) {
    let current = rollout;
    for (let round = 0; round < 12; round++) {
      const result = stepRollout({
        object: current,
        clusters: fleet.list(),
        profiles,
        deprecatedApis: reads,
        now: new Date(RUN_T0 + round * 1_000).toISOString(),
        nowMs: RUN_T0 + round * 1_000,
        timing: RUN_TIMING,
      });
      for (const command of result.commands) fleet.apply(command);
      for (const name of names) if (fleet.changing(name)) fleet.settle(name, "ready");
      current = { ...current, status: result.desired.status } as Rollout;
    }
    return current;
  }

  it("asks none of a stage's Clusters while one of them requests an API the version removes", () => {
    const fleet = fleetOf();
    const servicecidrs = read(METRICS);
    const reads = new Map(names.map((name) => [`uid-${name}`, name === "c2" ? servicecidrs : clean]));
    const rollout = settle(
      fleet,
      fleetRollout({ version: NEW, canary: 1, maxUnavailable: 4, stages: [{ name: "rest", share: 100 }] }),
      reads,
    );
    // The canary passed its own preflight and is done; the stage rest holds c1, c2, c3: none asked.
    expect(fleet.written).toEqual(["c0"]);
    expect(rollout.status?.phase).toBe("Progressing");
    const condition = (type: string) => rollout.status?.conditions?.find((c) => c.type === type);
    expect(condition("Preflight")).toMatchObject({ status: "False", reason: "DeprecatedAPIsInUse" });
    expect(condition("Preflight")?.message).toBe(
      "stage rest blocked: DeprecatedAPIsInUse: Cluster c2's API server was asked for networking.k8s.io/v1beta1 servicecidrs (removed in 1.37), which 1.37.0 no longer serves",
    );
    expect(condition("Ready")).toMatchObject({ status: "False", reason: "DeprecatedAPIsInUse" });

    // The workload moved off the API (and the API server restarted): the stage goes on, to the end.
    const after = settle(fleet, rollout, new Map(names.map((name) => [`uid-${name}`, clean])));
    expect(after.status?.phase).toBe("Succeeded");
    expect([...fleet.written].sort()).toEqual(names);
    expect(after.status?.conditions?.find((c) => c.type === "Preflight")?.status).toBe("True");
  });

  it("holds the canary itself on a version its profile does not offer, naming the Cluster and the profile", () => {
    const fleet = fleetOf();
    const rollout = settle(fleet, fleetRollout({ version: "1.37.9" }), new Map());
    expect(fleet.written).toEqual([]);
    const ready = rollout.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ reason: "VersionNotOffered" });
    expect(ready?.message).toContain(
      "Cluster c0: ClusterProfile p does not offer 1.37.9 (it offers 1.36.3, 1.37.0)",
    );
  });

  it("goes on with Clusters it could not look into, naming them in the Preflight condition", () => {
    const fleet = fleetOf();
    const rollout = settle(fleet, fleetRollout({ version: NEW, maxUnavailable: 4 }), new Map());
    expect(rollout.status?.phase).toBe("Succeeded");
    expect(fleet.written).toHaveLength(4);
  });

  it("holds it with spec.preflight.requireDeprecatedAPICheck, saying why", () => {
    const fleet = fleetOf();
    const none: DeprecatedApiRead = { kind: "unavailable", why: "backend simulated gives no admin access" };
    const rollout = settle(
      fleet,
      fleetRollout({ version: NEW, preflight: { requireDeprecatedAPICheck: true } }),
      new Map(names.map((name) => [`uid-${name}`, none])),
    );
    expect(fleet.written).toEqual([]);
    expect(rollout.status?.conditions?.find((c) => c.type === "Preflight")).toMatchObject({
      status: "False",
      reason: "DeprecatedAPIsNotChecked",
      message:
        "stage canary blocked: DeprecatedAPIsNotChecked: Cluster c0: deprecated APIs not checked: backend simulated gives no admin access",
    });
  });

  it("reads the API servers of the open stage's and the next stage's Clusters still to ask, no others", () => {
    const spec: RolloutSpec = {
      version: NEW,
      stages: [
        { name: "a", share: 25 },
        { name: "b", share: 100 },
      ],
    };
    const target = (name: string, stage: string, progress: "pending" | "done" | "changing") => ({
      name,
      uid: `uid-${name}`,
      stage,
      progress,
    });
    const targets = [
      target("c0", "canary", "done"),
      target("c1", "a", "changing"),
      target("c2", "a", "pending"),
      target("c3", "b", "pending"),
    ];
    expect(preflightCandidates(spec, targets).map((t) => t.name)).toEqual(["c2", "c3"]);
    expect(
      preflightCandidates(
        spec,
        targets.map((t) => ({ ...t, progress: "done" as const })),
      ),
    ).toEqual([]);
  });

  it("says a passed stage's notes briefly, grouped by reason", () => {
    const notes = names.map((name) => ({
      cluster: name,
      reason: "DeprecatedAPIsNotChecked",
      message: `Cluster ${name}: deprecated APIs not checked: backend simulated gives no admin access`,
      blocks: false,
    }));
    expect(preflightCondition("all", notes)).toEqual({
      status: "True",
      reason: "PreflightPassed",
      message:
        "stage all: nothing blocks; DeprecatedAPIsNotChecked on c0, c1, c2, c3: Cluster c0: deprecated APIs not checked: backend simulated gives no admin access",
    });
  });
});
