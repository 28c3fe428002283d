/**
 * `plan` predicts what the engine then does: for random Cluster worlds (settled by the engine's own machine
 * controller, commands answered by the simulated backend, at once or never) and a random change, the writes and
 * commands `plan` predicts per Cluster equal what the real MachineController writes (recorded at its MachineWriter,
 * the seam every runtime write passes) and issues (at the kind's `run`) once the change is applied, up to each
 * Cluster's first commands, which the engine is then left waiting on (held, never answered: a plan cannot know the
 * answer); Clusters the plan leaves out get no write and no command.
 *
 * In memory (MemoryApi) rather than on an API server, to run 1,000 cases; test/integration/plan.test.ts compares
 * predicted with written patches on a real API server for a few cases, and shows plan writes nothing there.
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import type { Cluster } from "../../../src/api/cluster.ts";
import { HIBERNATE_ANNOTATION } from "../../../src/api/constants/hibernation.ts";
import { RESOURCES } from "../../../src/api/constants.ts";
import type { ProviderConfig } from "../../../src/api/provider-config.ts";
import { clusterKind } from "../../../src/runtime/kinds/cluster/kind.ts";
import type { MachineKind } from "../../../src/runtime/machine-kind.ts";
import type { PlanChange } from "../../../src/runtime/plan/plan.ts";
import { aCluster, stored } from "../../support/builders.ts";
import type { MemoryApi } from "../../support/memory-api.ts";
import {
  Branches,
  expectPlanPredictsEngine,
  PLAN_TIMING,
  planPace,
  planProviderConfig,
  settledPlanEngine,
} from "../../support/plan-harness.ts";

const NAMESPACE = "team";
const OFFERED = [{ version: "1.33.3" }, { version: "1.32.7" }, { version: "1.31.1", deprecated: true }];

const { profileName: PROFILE, memoryApi } = planProviderConfig(OFFERED, "1.33.3");

/** One Cluster of a generated world. */
interface ClusterSeed {
  readonly version: string | undefined;
  readonly hibernate: string | undefined;
  /** Deleted before the world settles (stays deleting while the backend's deletion takes long). */
  readonly deleted: boolean;
}

/** The simulated backend's pace: each command done at once or after a long time (time stands still). */
interface Pace {
  readonly provisionDelayMs: number;
  readonly updateDelayMs: number;
  readonly deleteDelayMs: number;
  readonly hibernateDelayMs: number;
}

const version = fc.constantFrom(undefined, "1.33.3", "1.32.7", "1.31.1", "1.20.0");
const hibernate = fc.constantFrom(undefined, undefined, "true", "false", "maybe");
const seed: fc.Arbitrary<ClusterSeed> = fc.record({
  version,
  hibernate,
  deleted: fc.boolean(),
});
const pace: fc.Arbitrary<Pace> = planPace(
  "provisionDelayMs",
  "updateDelayMs",
  "deleteDelayMs",
  "hibernateDelayMs",
);

/** A change, by the index of the Cluster it is about (modulo the world's size). */
type ChangeSeed =
  | { readonly kind: "version"; readonly at: number; readonly version: string | undefined }
  | { readonly kind: "hibernate"; readonly at: number; readonly value: string | undefined }
  | { readonly kind: "label"; readonly at: number }
  | { readonly kind: "same"; readonly at: number }
  | { readonly kind: "delete"; readonly at: number }
  | { readonly kind: "create"; readonly version: string | undefined; readonly hibernate: string | undefined }
  | { readonly kind: "defaultVersion"; readonly version: string }
  | { readonly kind: "settings"; readonly size: number };

const at = fc.nat(7);
const changeSeed: fc.Arbitrary<ChangeSeed> = fc.oneof(
  fc.record({ kind: fc.constant("version" as const), at, version }),
  fc.record({ kind: fc.constant("hibernate" as const), at, value: hibernate }),
  fc.record({ kind: fc.constant("label" as const), at }),
  fc.record({ kind: fc.constant("same" as const), at }),
  // Weighted up: only a Cluster never made (version 1.20.0) is deleted at once, about 12 of 1,000 runs otherwise.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("delete" as const), at }) },
  fc.record({ kind: fc.constant("create" as const), version, hibernate }),
  fc.record({ kind: fc.constant("defaultVersion" as const), version: fc.constantFrom("1.33.3", "1.32.7") }),
  fc.record({ kind: fc.constant("settings" as const), size: fc.nat(3) }),
);

function clusterOf(index: number, seedOf: Pick<ClusterSeed, "version" | "hibernate">): Cluster {
  return stored(
    aCluster({
      name: `c${index}`,
      namespace: NAMESPACE,
      profile: PROFILE,
      tenancy: "Exclusive",
      ...(seedOf.version ? { version: seedOf.version } : {}),
      ...(seedOf.hibernate ? { annotations: { [HIBERNATE_ANNOTATION]: seedOf.hibernate } } : {}),
    }),
    { uid: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`, resourceVersion: "1" },
  );
}

/** A manifest for the change, made from the world as it stands. */
function changeOf(change: ChangeSeed, api: MemoryApi, size: number): PlanChange {
  const existing = (index: number) =>
    api.get(RESOURCES.Cluster, `${NAMESPACE}/c${index % size}`) as Cluster | undefined;
  const manifest = (cluster: Cluster, edit: (cluster: Cluster) => Cluster): PlanChange => {
    const { status: _status, ...rest } = edit(cluster);
    return { apply: rest as never };
  };
  switch (change.kind) {
    case "create":
      return { apply: clusterOf(size + 1, change) as never };
    case "defaultVersion":
    case "settings": {
      const live = api.get(RESOURCES.ProviderConfig, "small") as ProviderConfig;
      const spec =
        change.kind === "defaultVersion"
          ? { ...live.spec, defaultVersion: change.version }
          : { ...live.spec, settings: { size: change.size } };
      return { apply: { ...live, spec } as never };
    }
    default: {
      const cluster = existing(change.at);
      if (!cluster)
        return { apply: clusterOf(size + 2, { version: undefined, hibernate: undefined }) as never };
      if (change.kind === "delete")
        return { delete: { kind: "Cluster", namespace: NAMESPACE, name: cluster.metadata.name ?? "" } };
      return manifest(cluster, (c) => {
        if (change.kind === "same") return c;
        if (change.kind === "label")
          return { ...c, metadata: { ...c.metadata, labels: { ...c.metadata.labels, team: "blue" } } };
        if (change.kind === "hibernate") {
          const annotations = { ...c.metadata.annotations };
          if (change.value === undefined) delete annotations[HIBERNATE_ANNOTATION];
          else annotations[HIBERNATE_ANNOTATION] = change.value;
          return { ...c, metadata: { ...c.metadata, annotations } };
        }
        const { kubernetes: _k, ...spec } = c.spec;
        return { ...c, spec: change.version ? { ...spec, kubernetes: { version: change.version } } : spec };
      });
    }
  }
}

/** Everything seen across the cases, to show the interesting branches are reached. */
const branches = new Branches();

async function predictionHolds(seeds: readonly ClusterSeed[], paced: Pace, change: ChangeSeed) {
  const api = memoryApi([
    ...seeds.map((seeded, index) => ({ resource: RESOURCES.Cluster, object: clusterOf(index, seeded) })),
  ]);
  // The world as the engine leaves it: settled, the Clusters asked to go marked for deletion and settled again.
  const { engine, options } = await settledPlanEngine(
    api,
    { kinds: [clusterKind as MachineKind], kindSettings: { Cluster: PLAN_TIMING }, pace: paced },
    {
      resource: RESOURCES.Cluster,
      keys: seeds.flatMap((seeded, index) => (seeded.deleted ? [`${NAMESPACE}/c${index}`] : [])),
    },
  );
  try {
    for (const object of api.objects())
      if (object.kind === "Cluster")
        branches.saw(`before: ${(object as Cluster).status?.providerStatus?.state ?? "none"}`);

    // The prediction, from the world as stored, with the same backend (read only) and the same instant; then the
    // change applied for real (as the API server stores it), and the engine until each object's first commands.
    await expectPlanPredictsEngine(api, engine, options, changeOf(change, api, seeds.length), branches);
  } finally {
    engine.stop();
  }
}

describe("plan", () => {
  it("predicts, per Cluster, the writes and commands the engine makes when the change is applied (1,000 worlds)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(seed, { minLength: 1, maxLength: 4 }), pace, changeSeed, predictionHolds),
      { numRuns: Number(process.env.PLAN_RUNS ?? 1_000) },
    );
    // The interesting branches were reached: Clusters of every kind of state, and every kind of plan outcome.
    branches.expectReached([
      "before: ready",
      "before: provisioning",
      "before: failed",
      "before: deleting.releasing",
      "before: hibernating",
      "before: hibernated",
      "plan: Cluster settled",
      "plan: Cluster awaitsCommands",
      "plan: Cluster deleted",
      "plan: Cluster unchanged",
      "plan: commands",
      "plan: writes",
    ]);
  }, 600_000);
});
