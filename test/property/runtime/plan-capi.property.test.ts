/**
 * `plan` predicts what the engine then does, for the kinds Cluster API owns: random worlds of EngineClusters, and of
 * EngineControlPlanes, each beside its owning CAPI Cluster or none (settled first by the engine's own machine
 * controllers, backend commands answered by the simulated backend at once or never, ClusterEndpoints published into
 * the world), and a random change (an object created, deleted, given another version or profile, paused or
 * unpaused by its annotation or by its CAPI Cluster, labelled, re-applied as it is; the ProviderConfig's default
 * version). The writes and commands `plan` predicts per object equal what the real machine controllers write (at
 * their MachineWriter) and issue (at their `run`), up to each object's first commands; objects the plan leaves out
 * get none. 1,000 worlds of each kind, in memory (see plan.property.test.ts for why).
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import {
  CAPI_ANNOTATIONS,
  CAPI_CLUSTER_RESOURCE,
  CAPI_CONDITIONS,
  type CapiCluster,
} from "../../../src/api/cluster-api.ts";
import type { Condition } from "../../../src/api/common.ts";
import { ENGINE_CLUSTER_LABELS } from "../../../src/api/constants/capi.ts";
import { RESOURCES } from "../../../src/api/constants.ts";
import { ENGINE_CONTROL_PLANE_LABELS } from "../../../src/api/engine-control-plane.ts";
import { objectKey } from "../../../src/api/object-key.ts";
import type { ProviderConfig } from "../../../src/api/provider-config.ts";
import type { CapiOwnedCommand, CapiOwnedObject } from "../../../src/machines/capi-owned/contract.ts";
import { publishedEndpoint } from "../../../src/runtime/kinds/capi-owned/publication.ts";
import { engineClusterKind } from "../../../src/runtime/kinds/engine-cluster/kind.ts";
import { engineControlPlaneKind } from "../../../src/runtime/kinds/engine-control-plane/kind.ts";
import type { MachineKind, MachineObject } from "../../../src/runtime/machine-kind.ts";
import type { PlanChange } from "../../../src/runtime/plan/plan.ts";
import { resourceOfKind } from "../../../src/runtime/plan/plan-changes.ts";
import { anEngineCluster, anEngineControlPlane, capiOwner, stored } from "../../support/builders.ts";
import type { MemoryApi } from "../../support/memory-api.ts";
import {
  Branches,
  expectPlanPredictsEngine,
  PLAN_TIMING,
  planPace,
  planProviderConfig,
  type SetupRun,
  settledPlanEngine,
} from "../../support/plan-harness.ts";

const NAMESPACE = "capi";
const OFFERED = [{ version: "1.33.3" }, { version: "1.32.7" }];

const { profileName: PROFILE, memoryApi } = planProviderConfig(OFFERED, "1.33.3");

/** The two kinds, each planned over worlds of its own. */
type CapiKind = "EngineCluster" | "EngineControlPlane";
const KINDS: Record<
  CapiKind,
  { kind: MachineKind; uidLabel: string; versions: readonly string[]; ready: string }
> = {
  EngineCluster: {
    kind: engineClusterKind as MachineKind,
    uidLabel: ENGINE_CLUSTER_LABELS.engineClusterUid,
    versions: ["", "1.33.3", "1.32.7", "1.20.0"],
    ready: "provisioned",
  },
  EngineControlPlane: {
    kind: engineControlPlaneKind as MachineKind,
    uidLabel: ENGINE_CONTROL_PLANE_LABELS.uid,
    versions: ["v1.33.3", "v1.32.7", "v1.20.0"],
    ready: "running.ready",
  },
};

/** One object of a world and its owner. */
interface ObjectSeed {
  readonly version: number;
  /** A CAPI Cluster owns it (its ownerReference), paused or not, its infrastructure provisioned or not. */
  readonly owned: boolean;
  readonly ownerPaused: boolean;
  readonly provisioned: boolean;
  /** Cluster API's paused annotation on the object itself. */
  readonly pausedAnnotation: boolean;
  /** Its profile is one nobody offers. */
  readonly profileMissing: boolean;
  /** Deleted before the world settles again. */
  readonly deleted: boolean;
}

/** Mostly: owned by a provisioned, running CAPI Cluster; sometimes not, paused, or deleted. */
const often = fc.constantFrom(true, true, true, false);
const seldom = fc.constantFrom(false, false, false, true);
const objectSeed: fc.Arbitrary<ObjectSeed> = fc.record({
  version: fc.nat(3),
  owned: often,
  ownerPaused: seldom,
  provisioned: often,
  pausedAnnotation: seldom,
  profileMissing: seldom,
  deleted: seldom,
});

/** The simulated backend's pace: each command done at once or after a long time (time stands still). */
const pace = planPace("provisionDelayMs", "updateDelayMs", "deleteDelayMs");

type ChangeSeed =
  | { readonly kind: "version"; readonly at: number; readonly version: number }
  | { readonly kind: "pauseAnnotation"; readonly at: number; readonly on: boolean }
  | { readonly kind: "ownerPaused"; readonly at: number; readonly on: boolean }
  | { readonly kind: "profile"; readonly at: number; readonly missing: boolean }
  | { readonly kind: "label" | "same" | "delete"; readonly at: number }
  | { readonly kind: "create"; readonly seed: ObjectSeed }
  | { readonly kind: "defaultVersion"; readonly version: string };

const at = fc.nat(5);
const changeSeed: fc.Arbitrary<ChangeSeed> = fc.oneof(
  fc.record({ kind: fc.constant("version" as const), at, version: fc.nat(3) }),
  fc.record({ kind: fc.constant("pauseAnnotation" as const), at, on: fc.boolean() }),
  fc.record({ kind: fc.constant("ownerPaused" as const), at, on: fc.boolean() }),
  fc.record({ kind: fc.constant("profile" as const), at, missing: fc.boolean() }),
  fc.record({ kind: fc.constantFrom("label" as const, "same" as const, "delete" as const), at }),
  fc.record({ kind: fc.constant("create" as const), seed: objectSeed }),
  fc.record({ kind: fc.constant("defaultVersion" as const), version: fc.constantFrom("1.33.3", "1.32.7") }),
);

const uidOf = (prefix: string, index: number) =>
  `${prefix}000000-0000-4000-8000-${String(index).padStart(12, "0")}`;

/** The object `o<index>` of `kind` as the seed says, as stored. */
function objectOf(kind: CapiKind, index: number, seed: ObjectSeed): MachineObject {
  const props = {
    profile: seed.profileMissing ? "test.engine-test.gone" : PROFILE,
    ...(seed.owned ? { owner: `w${index}` } : {}),
    ...(seed.pausedAnnotation ? { annotations: { [CAPI_ANNOTATIONS.paused]: "" } } : {}),
  };
  const version = KINDS[kind].versions[seed.version % KINDS[kind].versions.length] ?? "";
  const made =
    kind === "EngineCluster"
      ? anEngineCluster({
          ...props,
          name: `o${index}`,
          namespace: NAMESPACE,
          ...(version ? { version } : {}),
        })
      : anEngineControlPlane({ ...props, version });
  const object = { ...made, metadata: { ...made.metadata, name: `o${index}`, namespace: NAMESPACE } };
  return stored(object, { uid: uidOf("e", index), resourceVersion: "1" }) as unknown as MachineObject;
}

/** The CAPI Cluster `w<index>` owning object `o<index>`. */
function ownerOf(index: number, seed: Pick<ObjectSeed, "ownerPaused" | "provisioned">): CapiCluster {
  return {
    apiVersion: `${CAPI_CLUSTER_RESOURCE.group}/${CAPI_CLUSTER_RESOURCE.version}`,
    kind: "Cluster",
    metadata: {
      name: `w${index}`,
      namespace: NAMESPACE,
      uid: capiOwner(`w${index}`).uid,
      generation: 1,
      resourceVersion: "1",
    },
    spec: { paused: seed.ownerPaused },
    status: { initialization: { infrastructureProvisioned: seed.provisioned } },
  } as CapiCluster;
}

/**
 * While a world is made: publishing writes its ClusterEndpoint into the world (as `writePublishedEndpoint` makes it;
 * the simulated backend gives no admin access, so no kubeconfig Secret), unpublishing removes it; the backend's
 * commands are the kind's own.
 */
function publishingInto(api: MemoryApi, uidLabel: string): SetupRun {
  return async (commands, object, run) => {
    const publisher = {
      apiVersion: object.apiVersion ?? "",
      kind: object.kind ?? "",
      uidLabel,
      metadata: object.metadata,
    };
    for (const command of commands as readonly CapiOwnedCommand[]) {
      if (command.kind === "publish")
        api.put(
          RESOURCES.ClusterEndpoint,
          publishedEndpoint(publisher, command.capiCluster, command.endpoint),
        );
      else if (command.kind === "unpublish") {
        const endpoint = api.get(RESOURCES.ClusterEndpoint, objectKey(object));
        if (endpoint) api.put(RESOURCES.ClusterEndpoint, endpoint, true);
      } else await run([command]);
    }
  };
}

/** A manifest for the change, made from the world as it stands. */
function changeOf(kind: CapiKind, change: ChangeSeed, api: MemoryApi, size: number): PlanChange {
  const resource = resourceOfKind(kind);
  const existing = (index: number) =>
    api.get(resource, `${NAMESPACE}/o${index % size}`) as (MachineObject & CapiOwnedObject) | undefined;
  type Owned = MachineObject & { readonly spec: Record<string, unknown> };
  const manifest = (object: Owned, edit: (object: Owned) => Owned): PlanChange => {
    const { status: _status, ...rest } = edit(object) as Owned & { status?: unknown };
    return { apply: rest as never };
  };
  switch (change.kind) {
    case "create":
      return { apply: objectOf(kind, size + 1, change.seed) as never };
    case "defaultVersion": {
      const live = api.get(RESOURCES.ProviderConfig, "small") as ProviderConfig;
      return { apply: { ...live, spec: { ...live.spec, defaultVersion: change.version } } as never };
    }
    case "ownerPaused": {
      const owner = api.get(CAPI_CLUSTER_RESOURCE, `${NAMESPACE}/w${change.at % size}`) as
        | CapiCluster
        | undefined;
      if (!owner)
        return { apply: ownerOf(change.at % size, { ownerPaused: change.on, provisioned: true }) as never };
      const { status: _status, ...rest } = owner;
      return { apply: { ...rest, spec: { ...owner.spec, paused: change.on } } as never };
    }
    default: {
      const object = existing(change.at);
      if (!object) return { apply: objectOf(kind, size + 2, { ...SEED_NONE }) as never };
      if (change.kind === "delete")
        return { delete: { kind, namespace: NAMESPACE, name: object.metadata.name ?? "" } };
      return manifest(object as unknown as Owned, (o) => {
        const annotations = { ...o.metadata.annotations };
        switch (change.kind) {
          case "same":
            return o;
          case "label":
            return { ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, team: "blue" } } };
          case "pauseAnnotation":
            if (change.on) annotations[CAPI_ANNOTATIONS.paused] = "";
            else delete annotations[CAPI_ANNOTATIONS.paused];
            return { ...o, metadata: { ...o.metadata, annotations } };
          case "profile":
            return {
              ...o,
              spec: { ...o.spec, profile: change.missing ? "test.engine-test.gone" : PROFILE },
            };
          default: {
            const versions = KINDS[kind].versions;
            const version = "version" in change ? (versions[change.version % versions.length] ?? "") : "";
            if (kind === "EngineControlPlane") return { ...o, spec: { ...o.spec, version } };
            const { kubernetes: _k, ...spec } = o.spec;
            return { ...o, spec: version ? { ...spec, kubernetes: { version } } : spec };
          }
        }
      });
    }
  }
}

const SEED_NONE: ObjectSeed = {
  version: 1,
  owned: true,
  ownerPaused: false,
  provisioned: true,
  pausedAnnotation: false,
  profileMissing: false,
  deleted: false,
};

const branches: Record<CapiKind, Branches> = {
  EngineCluster: new Branches(),
  EngineControlPlane: new Branches(),
};

async function predictionHolds(
  kind: CapiKind,
  seeds: readonly ObjectSeed[],
  paced: { provisionDelayMs: number; updateDelayMs: number; deleteDelayMs: number },
  change: ChangeSeed,
) {
  const seen = branches[kind];
  const api = memoryApi([
    ...seeds.map((seed, index) => ({ resource: resourceOfKind(kind), object: objectOf(kind, index, seed) })),
    ...seeds.flatMap((seed, index) =>
      seed.owned ? [{ resource: CAPI_CLUSTER_RESOURCE, object: ownerOf(index, seed) }] : [],
    ),
  ]);
  // The world as the engine leaves it: settled, the objects asked to go marked for deletion and settled again.
  const { engine, options } = await settledPlanEngine(
    api,
    {
      kinds: [KINDS[kind].kind],
      kindSettings: { [kind]: { enabled: true, ...PLAN_TIMING } },
      pace: paced,
      setupRuns: { [kind]: publishingInto(api, KINDS[kind].uidLabel) },
    },
    {
      resource: resourceOfKind(kind),
      keys: seeds.flatMap((seed, index) => (seed.deleted ? [`${NAMESPACE}/o${index}`] : [])),
    },
  );
  try {
    for (const object of api.objects()) {
      if (object.kind !== kind) continue;
      const state = (object as { status?: { state?: string } }).status?.state;
      seen.saw(`before: ${state ?? "none"}`);
      const conditions = (object as { status?: { conditions?: readonly Condition[] } }).status?.conditions;
      if (conditions?.some((c) => c.type === CAPI_CONDITIONS.paused && c.status === "True"))
        seen.saw("before: paused");
    }
    if (api.objects().some((object) => object.kind === "ClusterEndpoint")) seen.saw("before: published");

    await expectPlanPredictsEngine(api, engine, options, changeOf(kind, change, api, seeds.length), seen);
  } finally {
    engine.stop();
  }
}

const RUNS = Number(process.env.PLAN_RUNS ?? 1_000);

describe("plan of the kinds Cluster API owns", () => {
  for (const kind of ["EngineCluster", "EngineControlPlane"] as const) {
    it(`predicts, per ${kind}, the writes and commands the engine makes when the change is applied (1,000 worlds)`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(objectSeed, { minLength: 1, maxLength: 3 }),
          pace,
          changeSeed,
          (seeds, paced, change) => predictionHolds(kind, seeds, paced, change),
        ),
        { numRuns: RUNS },
      );
      branches[kind].expectReached([
        "before: none",
        "before: pending",
        "before: provisioning",
        `before: ${KINDS[kind].ready}`,
        "before: failed",
        "before: deleting.releasing",
        "before: paused",
        "before: published",
        `plan: ${kind} settled`,
        `plan: ${kind} awaitsCommands`,
        `plan: ${kind} deleted`,
        `plan: ${kind} unchanged`,
        "plan: commands",
        "plan: writes",
      ]);
    }, 600_000);
  }
});
