/** The scheduler's decision for one ClusterRequest (schedule) and the pure step around it (stepClusterRequest). */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../../src/api/cluster.ts";
import type { ClusterRequest } from "../../../../src/api/cluster-request.ts";
import type { SchedulerConfig, SchedulerStrategy } from "../../../../src/api/scheduler-config.ts";
import {
  type Decision,
  type Placement,
  type SchedulingView,
  schedule,
} from "../../../../src/machines/cluster-request/schedule.ts";
import { stepClusterRequest } from "../../../../src/machines/cluster-request/step.ts";
import { aCluster, aClusterRequest, type ClusterRequestProps, stored } from "../../../support/builders.ts";
import { sha256ClusterName } from "../../../support/old-cluster-names.ts";
import { SchedulerWorld } from "../../../support/scheduler-world.ts";
import { writesOf } from "../../../support/step-writes.ts";

// The names on the wire, written out (not imported), so a renamed constant fails here.
const REQUEST_FINALIZER = "clusters.openmcp.cloud/request";
const clusterFinalizer = (uid: string) => `request.clusters.openmcp.cloud/${uid}`;
const DELETE_WITHOUT_REQUESTS = "clusters.openmcp.cloud/delete-without-requests";
const RANDOMIZE = "clusters.openmcp.cloud/randomize-cluster-name";
const COPIED = "metadata.open-control-plane.io/";

const PROFILE = "test.engine-test.small";
const UID = "4a1e6f0e-0000-4000-8000-00000000aaaa";
const OTHER_UID = "4a1e6f0e-0000-4000-8000-00000000bbbb";
const NOW = "2026-11-23T10:00:00Z";
const LATER = "2026-11-23T11:00:00Z";
const TIMING = { pollMs: 1_000, retryMs: 30_000, resyncMs: 600_000 };

function configWith(strategy: SchedulerStrategy = "Balanced", workloadTenancy = 2): SchedulerConfig {
  const spec = (tenancy: "Exclusive" | "Shared") => ({ profile: PROFILE, tenancy });
  return {
    scope: "Cluster",
    strategy,
    selectors: {},
    purposeMappings: {
      mcp: { tenancyCount: 0, template: { metadata: { namespace: "clusters" }, spec: spec("Exclusive") } },
      workload: {
        tenancyCount: workloadTenancy,
        template: { metadata: { namespace: "clusters" }, spec: spec("Shared") },
      },
      platform: {
        tenancyCount: 0,
        template: { metadata: { name: "platform", namespace: "clusters" }, spec: spec("Shared") },
      },
    },
  };
}

function viewOf(partial: Partial<SchedulingView> = {}): SchedulingView {
  return {
    config: configWith(),
    purposes: new Map(),
    profileTraits: new Map([[PROFILE, []]]),
    clusters: [],
    liveRequests: new Set([UID]),
    grant: undefined,
    ...partial,
  };
}

function aRequest(props: ClusterRequestProps = {}, uid = UID): ClusterRequest {
  return stored(aClusterRequest({ name: "my-request", namespace: "team-a", ...props }), { uid });
}

/** A Shared Cluster for `workload` in namespace `clusters`, serving the given request UIDs. */
function sharedCluster(name: string, served: readonly string[] = [], namespace = "clusters"): Cluster {
  const cluster = aCluster({
    name,
    namespace,
    profile: PROFILE,
    tenancy: "Shared",
    finalizers: served.map(clusterFinalizer),
  });
  return { ...cluster, spec: { ...cluster.spec, purposes: ["workload"] } };
}

/** An Exclusive Cluster `name` in namespace `clusters` carrying `finalizers`. */
function exclusiveCluster(name: string, finalizers: string[]): Cluster {
  return aCluster({ name, namespace: "clusters", tenancy: "Exclusive", finalizers });
}

/** The 8-character hash of a per-request name, computed here from its definition: base32 of SHAKE128's 40 bits. */
function digestOf(namespace: string, name: string): string {
  const bytes = createHash("shake128", { outputLength: 5 }).update(`${namespace}/${name}`).digest();
  const bits = [...bytes].map((byte) => byte.toString(2).padStart(8, "0")).join("");
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  return (bits.match(/.{5}/g) ?? []).map((chunk) => alphabet[Number.parseInt(chunk, 2)]).join("");
}

function placementOf(decision: Decision): Placement {
  if (decision.kind !== "place") throw new Error(`expected a placement, got ${JSON.stringify(decision)}`);
  return decision.placement;
}

const nameOf = (decision: Decision) => {
  const { cluster } = placementOf(decision);
  return `${cluster.metadata.namespace}/${cluster.metadata.name}`;
};

describe("schedule", () => {
  it("is misconfigured without a configuration", () => {
    expect(schedule(aRequest({ purpose: "mcp" }), viewOf({ config: undefined }))).toEqual({
      kind: "misconfigured",
      message: "the scheduler has no configuration",
    });
  });

  it("is misconfigured for an unknown purpose, naming it and the known ones", () => {
    expect(schedule(aRequest({ purpose: "analytics" }), viewOf())).toEqual({
      kind: "misconfigured",
      message:
        'the scheduler configuration has no mapping for purpose "analytics" (known purposes: mcp, platform, workload; a purpose another scheduler answers belongs in purposesServedElsewhere)',
    });
  });

  describe("an Exclusive purpose", () => {
    const request = aRequest({
      purpose: "mcp",
      labels: { [`${COPIED}team`]: "a", "app.kubernetes.io/name": "not-copied" },
      annotations: { [`${COPIED}contact`]: "team-a@example.com", "example.com/note": "not copied" },
    });

    it("creates a Cluster of its own, named after the request, that shows whom it serves", () => {
      const placement = placementOf(schedule(request, viewOf()));
      expect(placement).toMatchObject({ created: true, shared: false, held: false, prefix: undefined });
      const { metadata, spec } = placement.cluster;
      expect(metadata.name).toBe(`mcp-${digestOf("team-a", "my-request")}`);
      expect(metadata.name).toMatch(/^mcp-[a-z2-7]{8}$/);
      expect(metadata.namespace).toBe("clusters");
      expect(metadata.finalizers).toEqual([clusterFinalizer(UID)]);
      expect(metadata.labels?.[DELETE_WITHOUT_REQUESTS]).toBe("true");
      expect(spec).toEqual({ profile: PROFILE, tenancy: "Exclusive", purposes: ["mcp"] });
    });

    it("copies only the request's metadata.open-control-plane.io/ labels and annotations", () => {
      const { metadata } = placementOf(schedule(request, viewOf())).cluster;
      expect(metadata.labels).toEqual({ [DELETE_WITHOUT_REQUESTS]: "true", [`${COPIED}team`]: "a" });
      expect(metadata.annotations).toEqual({ [`${COPIED}contact`]: "team-a@example.com" });
    });

    it("gives requests of different names different Clusters, and the same request always the same one", () => {
      const other = aRequest({ purpose: "mcp", name: "my-other-request" }, OTHER_UID);
      expect(nameOf(schedule(request, viewOf()))).toBe(nameOf(schedule(request, viewOf())));
      expect(nameOf(schedule(other, viewOf()))).not.toBe(nameOf(schedule(request, viewOf())));
    });

    it("finds a Cluster named the old way (sha256) through its finalizer, with no status and no grant", () => {
      // Before the names followed openMCP's, they were 8 base32 characters of sha256 over <namespace>/<name>.
      const oldName = sha256ClusterName("mcp-", "team-a", "my-request");
      expect(oldName).not.toBe(`mcp-${digestOf("team-a", "my-request")}`);
      const old = exclusiveCluster(oldName, [clusterFinalizer(UID)]);
      const placement = placementOf(schedule(request, viewOf({ clusters: [old] })));
      expect(placement.created).toBe(false);
      expect(placement.cluster).toBe(old);
    });

    it("is misconfigured, naming the prefix, when its prefix leaves no room for the hash (as openMCP refuses it)", () => {
      const config = configWith();
      const long = `${"m".repeat(56)}-`;
      const mcp = config.purposeMappings.mcp;
      if (!mcp) throw new Error("configWith has mcp");
      const tooLong = {
        ...config,
        purposeMappings: {
          ...config.purposeMappings,
          mcp: {
            ...mcp,
            template: { ...mcp.template, metadata: { ...mcp.template.metadata, generateName: long } },
          },
        },
      };
      const decision = schedule(request, viewOf({ config: tooLong }));
      expect(decision).toMatchObject({ kind: "misconfigured" });
      expect((decision as { message: string }).message).toBe(
        `purpose mcp: the Cluster name prefix "${long}" has 57 characters; at most 55 leave room for the 8-character hash within 63`,
      );
    });

    it("asks for a generated name when the request carries the randomize label", () => {
      const random = aRequest({ purpose: "mcp", labels: { [RANDOMIZE]: "true" } });
      const { metadata } = placementOf(schedule(random, viewOf())).cluster;
      expect(metadata.generateName).toBe("mcp-");
      expect(metadata.name).toBeUndefined();
    });

    it("is denied with ClusterConflict when its Cluster's name serves another live request", () => {
      const name = `mcp-${digestOf("team-a", "my-request")}`;
      const taken = exclusiveCluster(name, [clusterFinalizer(OTHER_UID)]);
      const decision = schedule(
        request,
        viewOf({ clusters: [taken], liveRequests: new Set([UID, OTHER_UID]) }),
      );
      expect(decision).toMatchObject({ kind: "deny", reason: "ClusterConflict" });
      expect((decision as { message: string }).message).toContain(`Cluster clusters/${name}`);
      expect((decision as { message: string }).message).toContain(OTHER_UID);
    });

    it("adopts a Cluster of its name that no live request holds", () => {
      const name = `mcp-${digestOf("team-a", "my-request")}`;
      const leftover = exclusiveCluster(name, [clusterFinalizer(OTHER_UID)]);
      const placement = placementOf(schedule(request, viewOf({ clusters: [leftover] })));
      expect(placement.created).toBe(false);
      expect(placement.cluster).toBe(leftover);
    });

    it("lets go of its Cluster when someone deletes it (replace), and waits when it never held it", () => {
      const name = `mcp-${digestOf("team-a", "my-request")}`;
      const granted: ClusterRequest = {
        ...request,
        status: { observedGeneration: 1, phase: "Granted", cluster: { name, namespace: "clusters" } },
      };
      const deleting = (finalizers: string[]) => {
        const cluster = exclusiveCluster(name, finalizers);
        return { ...cluster, metadata: { ...cluster.metadata, deletionTimestamp: NOW } };
      };
      const held = deleting([clusterFinalizer(UID)]);
      expect(schedule(granted, viewOf({ clusters: [held] }))).toMatchObject({
        kind: "replace",
        cluster: held,
      });
      expect(schedule(granted, viewOf({ clusters: [deleting(["someone.else/finalizer"])] }))).toMatchObject({
        kind: "wait",
      });
    });

    it("keeps the Cluster it holds even when the configuration no longer knows its purpose", () => {
      const world = new SchedulerWorld(configWith());
      world.submit(request);
      const before = nameOf(schedule(request, world.view(request)));
      const view = { ...world.view(request), config: { ...configWith(), purposeMappings: {} } };
      expect(nameOf(schedule(request, view))).toBe(before);
    });
  });

  describe("a Shared purpose", () => {
    it("joins an existing Cluster with room instead of creating one", () => {
      const existing = sharedCluster("shared-1", [OTHER_UID]);
      const placement = placementOf(schedule(aRequest(), viewOf({ clusters: [existing] })));
      expect(placement.created).toBe(false);
      expect(placement.cluster).toBe(existing);
      expect(placement.shared).toBe(true);
      expect(placement.prefix).toMatch(/^[a-z0-9][a-z0-9-]{2,19}$/);
    });

    it("creates a new Cluster when every fitting one is full (tenancyCount)", () => {
      const full = sharedCluster("shared-1", [OTHER_UID, "third-uid"]);
      const placement = placementOf(schedule(aRequest(), viewOf({ clusters: [full] })));
      expect(placement.created).toBe(true);
      expect(placement.cluster.metadata.name).toBe(`workload-${digestOf("team-a", "my-request")}`);
      expect(placement.cluster.metadata.finalizers).toEqual([clusterFinalizer(UID)]);
      expect(placement.cluster.spec.tenancy).toBe("Shared");
      expect(placement.tenancyCount).toBe(2);
    });

    it("creates the one Cluster of an unlimited purpose under the template's name", () => {
      const placement = placementOf(schedule(aRequest({ purpose: "platform" }), viewOf()));
      expect(placement.created).toBe(true);
      expect(placement.cluster.metadata).toMatchObject({ name: "platform", namespace: "clusters" });
    });

    describe("with a required trait its Cluster lacks", () => {
      const GPU = "example.com/gpu";
      const wantsGpu = aRequest({ purpose: "platform", annotations: { "engine.openmcp.cloud/traits": GPU } });
      const platform = {
        ...sharedCluster("platform"),
        spec: { ...sharedCluster("platform").spec, purposes: ["platform"] },
      };

      it("is denied MissingTrait, naming the trait, when no profile offers it", () => {
        const decision = schedule(wantsGpu, viewOf({ clusters: [platform] }));
        expect(decision).toMatchObject({ kind: "deny", reason: "MissingTrait" });
        expect((decision as { message: string }).message).toContain(`required traits: ${GPU}`);
      });

      it("is denied ClusterConflict, naming the trait its Cluster's profile lacks, when another profile offers it", () => {
        const decision = schedule(
          wantsGpu,
          viewOf({
            clusters: [platform],
            profileTraits: new Map([
              [PROFILE, []],
              ["gpu-profile", [GPU]],
            ]),
          }),
        );
        expect(decision).toMatchObject({ kind: "deny", reason: "ClusterConflict" });
        expect((decision as { message: string }).message).toContain(
          `its profile ${PROFILE} does not meet the required traits: ${GPU}`,
        );
      });
    });

    describe("chooses among fitting Clusters by strategy", () => {
      // Listed out of order on purpose: the caches promise no order.
      const clusters = [
        sharedCluster("c-3", ["u1"]),
        sharedCluster("c-1", ["u2", "u3"]),
        sharedCluster("c-4", []),
        sharedCluster("c-2", ["u4"]),
      ];
      const pick = (strategy: SchedulerStrategy, pool = clusters, uid = UID) =>
        nameOf(schedule(aRequest({}, uid), viewOf({ config: configWith(strategy, 5), clusters: [...pool] })));

      it("Balanced: the one serving fewest requests", () => {
        expect(pick("Balanced")).toBe("clusters/c-4");
        expect(pick("Balanced", clusters.slice(0, 2))).toBe("clusters/c-3");
      });

      it("Balanced: the first by namespace/name among equally loaded ones", () => {
        expect(
          pick(
            "Balanced",
            clusters.filter((c) => c.metadata.name !== "c-4"),
          ),
        ).toBe("clusters/c-2");
      });

      it("BalancedIgnoreEmpty: the least loaded of those already serving someone", () => {
        expect(pick("BalancedIgnoreEmpty")).toBe("clusters/c-2");
        expect(pick("BalancedIgnoreEmpty", [sharedCluster("e-2"), sharedCluster("e-1")])).toBe(
          "clusters/e-1",
        );
      });

      it("Simple: the first by namespace/name, however loaded", () => {
        expect(pick("Simple")).toBe("clusters/c-1");
        expect(pick("Simple", [...clusters, sharedCluster("z-0", [], "a-namespace")])).toBe(
          "a-namespace/z-0",
        );
      });

      it("Random: the same for the same request, whatever the order, and spread over requests", () => {
        const chosen = pick("Random");
        expect(pick("Random", [...clusters].reverse())).toBe(chosen);
        expect(clusters.map((c) => `clusters/${c.metadata.name}`)).toContain(chosen);
        const spread = new Set(
          Array.from({ length: 32 }, (_, i) => pick("Random", clusters, `uid-${String(i).padStart(4, "0")}`)),
        );
        expect(spread.size).toBeGreaterThan(1);
      });
    });
  });
});

describe("stepClusterRequest", () => {
  const step = (request: ClusterRequest, view: SchedulingView, now = NOW) => {
    const result = stepClusterRequest({ request, view, now, timing: TIMING });
    return { ...result, ...writesOf(request, result) };
  };
  /** The request as stored after the runtime wrote what the step desired. */
  const written = (request: ClusterRequest, result: ReturnType<typeof step>): ClusterRequest => ({
    ...request,
    metadata: result.desired.metadata,
    ...(result.desired.status ? { status: result.desired.status } : {}),
  });

  /** A request taken through scheduling to Granted in `world`, as the runtime would. */
  function granted(world: SchedulerWorld, request: ClusterRequest): ClusterRequest {
    const first = step(request, world.view(request));
    const scheduling = written(request, first);
    world.submit(scheduling); // carries out the assign command
    const second = step(scheduling, world.view(scheduling));
    expect(second.state).toBe("granted");
    return written(scheduling, second);
  }

  it("on a new request adds the scheduler's finalizer and orders the assignment", () => {
    const request = aRequest({ purpose: "mcp" });
    const world = new SchedulerWorld(configWith());
    const result = step(request, world.view(request));
    expect(result.state).toBe("scheduling");
    expect(result.desired.metadata.finalizers).toEqual([REQUEST_FINALIZER]);
    expect(result.commands).toEqual([{ kind: "assign", placement: placementOf(result.decision) }]);
    expect(result.desired.status?.phase).toBe("Pending");
    expect(result.desired.status?.conditions).toMatchObject([
      { type: "ClusterGranted", status: "False", reason: "Scheduling" },
    ]);
  });

  it("grants once the Cluster, its finalizer and the grant are in place, and records the Cluster", () => {
    const request = aRequest({ purpose: "mcp" });
    const world = new SchedulerWorld(configWith());
    const done = granted(world, request);
    const name = `mcp-${digestOf("team-a", "my-request")}`;
    expect(done.status).toMatchObject({ phase: "Granted", cluster: { name, namespace: "clusters" } });
    expect(done.status?.conditions).toMatchObject([
      { type: "ClusterGranted", status: "True", reason: "Granted" },
    ]);
  });

  it("marks the request as its own with its finalizer, and never writes status.cluster without the mark", () => {
    const request = aRequest({ purpose: "mcp" });
    const world = new SchedulerWorld(configWith());
    const first = step(request, world.view(request));
    expect(first.desired.metadata.annotations?.["engine.openmcp.cloud/scheduler"]).toBe("openmcp-engine");
    const done = granted(world, request);
    expect(done.status?.cluster).toBeDefined();
    expect(done.metadata.annotations?.["engine.openmcp.cloud/scheduler"]).toBe("openmcp-engine");
  });

  it("tells a shared request why it did not get the prefix it proposed, with one Warning Event", () => {
    const bad = aRequest({
      purpose: "platform",
      annotations: { "engine.openmcp.cloud/prefix": "Bad Prefix!" },
    });
    const world = new SchedulerWorld(configWith());
    const first = step(bad, world.view(bad));
    const scheduling = written(bad, first);
    world.submit(scheduling);
    const second = step(scheduling, world.view(scheduling));
    expect(second.state).toBe("granted");
    const condition = second.desired.status?.conditions?.find((c) => c.type === "ProposedPrefix");
    expect(condition).toMatchObject({ status: "False", reason: "InvalidPrefix" });
    expect(condition?.message).toMatch(
      /^the proposed prefix "Bad Prefix!" is not usable: a prefix has only lowercase letters, digits and '-', and starts with a letter or digit; prefix "p[a-z2-7]{7}-" was granted instead$/,
    );
    expect(second.events).toContainEqual({
      type: "Warning",
      reason: "InvalidPrefix",
      message: condition?.message,
    });
    // Told once: the next look finds the condition as it is and records nothing.
    const done = written(scheduling, second);
    expect(step(done, world.view(done), LATER).events).toEqual([]);
  });

  it("tells an Exclusive request that proposes a prefix that none is used on a Cluster of its own", () => {
    const world = new SchedulerWorld(configWith());
    const done = granted(
      world,
      aRequest({ purpose: "mcp", annotations: { "engine.openmcp.cloud/prefix": "team-" } }),
    );
    expect(done.status?.conditions?.find((c) => c.type === "ProposedPrefix")).toEqual(
      expect.objectContaining({
        status: "False",
        reason: "PrefixNotUsed",
        message:
          'the proposed prefix "team-" is not used: the Cluster serves this request alone (Exclusive), where no prefix is granted',
      }),
    );
  });

  it("tells a shared request its proposed prefix was granted, or taken by another on the Cluster", () => {
    const world = new SchedulerWorld(configWith());
    const proposing = (name: string, uid: string) =>
      aRequest({ purpose: "platform", name, annotations: { "engine.openmcp.cloud/prefix": "team-" } }, uid);
    const first = granted(world, proposing("first", UID));
    const second = granted(world, proposing("second", OTHER_UID));
    const conditionOf = (r: ClusterRequest) => r.status?.conditions?.find((c) => c.type === "ProposedPrefix");
    expect(conditionOf(first)).toMatchObject({ status: "True", reason: "PrefixAsProposed" });
    expect(conditionOf(second)).toMatchObject({ status: "False", reason: "PrefixTaken" });
    expect(conditionOf(second)?.message).toContain(
      'collides with "team-", held by another request on Cluster clusters/platform',
    );
  });

  it("on a granted, held request desires it unchanged: no commands, nothing to write", () => {
    for (const purpose of ["mcp", "workload", "platform"]) {
      const world = new SchedulerWorld(configWith());
      const done = granted(world, aRequest({ purpose }));
      const again = step(done, world.view(done), LATER);
      expect(again.state, purpose).toBe("granted");
      expect(again.commands).toEqual([]);
      expect(again.events).toEqual([]);
      expect(again.desired.metadata).toEqual(done.metadata);
      expect(again.desired.status).toEqual(done.status);
      expect([again.metadataPatch, again.statusPatch]).toEqual([[], []]);
    }
  });

  it("on deletion orders the release, then removes its finalizer once nothing is held", () => {
    const world = new SchedulerWorld(configWith());
    const done = granted(world, aRequest({ purpose: "mcp" }));
    const deleting: ClusterRequest = { ...done, metadata: { ...done.metadata, deletionTimestamp: LATER } };
    const name = `mcp-${digestOf("team-a", "my-request")}`;

    const releasing = step(deleting, world.view(deleting));
    expect(releasing.state).toBe("deleting.releasing");
    expect(releasing.commands).toEqual([{ kind: "release", clusters: [{ name, namespace: "clusters" }] }]);
    expect(releasing.desired.metadata.finalizers).toContain(REQUEST_FINALIZER);

    world.remove(deleting); // carries out the release
    const released = step(deleting, world.view(deleting));
    expect(released.state).toBe("deleting.released");
    expect(released.commands).toEqual([]);
    expect(released.desired.metadata.finalizers ?? []).not.toContain(REQUEST_FINALIZER);
  });

  describe("with waitForClusterDeletion, after the release", () => {
    const name = `mcp-${digestOf("team-a", "my-request")}`;
    const request: ClusterRequest = (() => {
      const base = aRequest({
        purpose: "mcp",
        waitForClusterDeletion: true,
        finalizers: [REQUEST_FINALIZER],
      });
      return {
        ...base,
        metadata: { ...base.metadata, deletionTimestamp: LATER },
        status: { observedGeneration: 1, phase: "Granted", cluster: { name, namespace: "clusters" } },
      };
    })();
    /** The request's former Cluster, no longer carrying its finalizer. */
    const cluster = (props: { marked: boolean; served?: string[]; deleting?: boolean }): Cluster => {
      const base = aCluster({
        name,
        namespace: "clusters",
        tenancy: "Exclusive",
        labels: props.marked ? { [DELETE_WITHOUT_REQUESTS]: "true" } : {},
        finalizers: ["engine.openmcp.cloud/cluster", ...(props.served ?? []).map(clusterFinalizer)],
      });
      return props.deleting ? { ...base, metadata: { ...base.metadata, deletionTimestamp: LATER } } : base;
    };
    const stepWith = (clusters: Cluster[]) => step(request, viewOf({ clusters, liveRequests: new Set() }));

    it("waits while the Cluster is being deleted, or is marked delete-without-requests and nobody holds it", () => {
      for (const clusters of [[cluster({ marked: true })], [cluster({ marked: true, deleting: true })]]) {
        const result = stepWith(clusters);
        expect(result.state).toBe("deleting.waitingForCluster");
        expect(result.commands).toEqual([]);
        expect(result.desired.metadata.finalizers).toContain(REQUEST_FINALIZER);
        expect(result.desired.status?.conditions).toMatchObject([
          { type: "ClusterGranted", reason: "WaitingForClusterDeletion" },
        ]);
      }
    });

    it("goes once the Cluster is gone, or stays because another request holds it or it is not marked", () => {
      for (const clusters of [
        [],
        [cluster({ marked: true, served: [OTHER_UID] })],
        [cluster({ marked: false })],
      ]) {
        const result = stepWith(clusters);
        expect(result.state).toBe("deleting.released");
        expect(result.desired.metadata.finalizers ?? []).not.toContain(REQUEST_FINALIZER);
      }
    });
  });
});
