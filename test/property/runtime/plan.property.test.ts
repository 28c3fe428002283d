/**
 * `plan` predicts what the engine then does: for random Cluster worlds (settled by the engine's own machine
 * controller first) and a random change, the writes and backend commands `plan` predicts per Cluster equal what
 * the real MachineController writes (recorded at its MachineWriter, the seam every runtime write passes) and calls
 * at the simulated backend once the change is applied, up to each Cluster's first commands (whose answer a plan
 * cannot know); and Clusters the plan leaves out get no write and no command.
 *
 * In memory (MemoryApi) rather than on an API server, to run 1,000 cases; test/integration/plan.test.ts compares
 * predicted with written patches on a real API server for a few cases, and shows plan writes nothing there.
 */
import { KubeConfig } from "@kubernetes/client-node";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClusterTarget } from "../../../src/api/backend.ts";
import type { ClusterBackend } from "../../../src/api/backend-contract.ts";
import type { Clock } from "../../../src/api/clock.ts";
import type { Cluster } from "../../../src/api/cluster.ts";
import { HIBERNATE_ANNOTATION } from "../../../src/api/constants/hibernation.ts";
import { RESOURCES } from "../../../src/api/constants.ts";
import { objectKey } from "../../../src/api/object-key.ts";
import type { ProviderConfig } from "../../../src/api/provider-config.ts";
import { desiredClusterProfile } from "../../../src/machines/cluster-profile/profile.ts";
import type { PatchOperation } from "../../../src/machines/shared/json-patch.ts";
import { rfc3339 } from "../../../src/machines/shared/rfc3339.ts";
import { SimulatedBackend } from "../../../src/providers/simulated.ts";
import { AdminAccessCache } from "../../../src/runtime/admin-access-cache.ts";
import { Backends } from "../../../src/runtime/backends.ts";
import { drivenKinds } from "../../../src/runtime/engine.ts";
import { InformerSet } from "../../../src/runtime/informers.ts";
import { clusterKind } from "../../../src/runtime/kinds/cluster/kind.ts";
import { PROFILE_CACHES } from "../../../src/runtime/kinds/registry.ts";
import { silentLogger } from "../../../src/runtime/logger.ts";
import { MachineController } from "../../../src/runtime/machine-controller.ts";
import type { MachineKind, MachineObject } from "../../../src/runtime/machine-kind.ts";
import { type Plan, type PlanChange, plan } from "../../../src/runtime/plan/plan.ts";
import { applyChange, targetOf } from "../../../src/runtime/plan/plan-changes.ts";
import { memorySources } from "../../../src/runtime/plan/planned-sources.ts";
import { aCluster, aProviderConfig, stored } from "../../support/builders.ts";
import { MemoryApi } from "../../support/memory-api.ts";

const PROVIDER = "engine-test";
const ENVIRONMENT = "test";
const NAMESPACE = "team";
const AT = Date.parse("2026-11-28T12:00:00Z");
/** Time stands still: every step of both sides is taken at the same instant. */
const clock: Clock = { now: () => AT, schedule: () => ({ cancel: () => {} }) };
const LONG = 600_000;
const OFFERED = [{ version: "1.33.3" }, { version: "1.32.7" }, { version: "1.31.1", deprecated: true }];
const CLUSTER_TIMING = { Cluster: { timing: { pollMs: 100, retryMs: 200, resyncMs: 60_000 } } };

const config: ProviderConfig = stored(
  aProviderConfig({
    name: "small",
    providerRef: { name: PROVIDER },
    supportedVersions: OFFERED,
    defaultVersion: "1.33.3",
  }),
  { uid: "c0nf1g00-0000-4000-8000-000000000001", resourceVersion: "1" },
);
const profile = {
  ...desiredClusterProfile(
    config,
    { providerName: PROVIDER, environment: ENVIRONMENT, backends: ["simulated"] },
    OFFERED,
    [],
  ),
};
const PROFILE = profile.metadata.name ?? "";

/** A KubeConfig that names an API server nobody listens at: nothing here may reach one. */
function offlineKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "nowhere", server: "https://127.0.0.1:9", skipTLSVerify: true }],
    users: [{ name: "nobody" }],
    contexts: [{ name: "nowhere", cluster: "nowhere", user: "nobody" }],
    currentContext: "nowhere",
  });
  return kubeConfig;
}

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
const pace: fc.Arbitrary<Pace> = fc.record({
  provisionDelayMs: fc.constantFrom(0, LONG),
  updateDelayMs: fc.constantFrom(0, LONG),
  deleteDelayMs: fc.constantFrom(0, LONG),
  hibernateDelayMs: fc.constantFrom(0, LONG),
});

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
  fc.record({ kind: fc.constant("delete" as const), at }),
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

/** What happened to one Cluster, in order: writes (by part) and commands (by backend method). */
type Happening =
  | { readonly write: "object" | "status"; readonly operations: readonly PatchOperation[] }
  | { readonly command: string; readonly version?: string }
  /** The backend asked to observe: the end of a step's commands (the engine looks again before its next step). */
  | { readonly look: true };

const COMMANDS = new Set(["create", "update", "delete", "hibernate", "wake"]);

/** `backend` with every command appended to the timeline of its Cluster. */
function commandsInto(backend: ClusterBackend, timeline: (key: string, happening: Happening) => void) {
  return new Proxy(backend, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        if (property === "observe") {
          const about = args[0] as ClusterTarget;
          timeline(`${about.namespace}/${about.name}`, { look: true });
        }
        if (COMMANDS.has(property)) {
          const about = args[0] as ClusterTarget;
          const version = typeof args[1] === "string" ? args[1] : undefined;
          timeline(`${about.namespace}/${about.name}`, {
            command: property,
            ...(version ? { version } : {}),
          });
        }
        return value.apply(target, args);
      };
    },
  });
}

/** The engine over the memory API: the Cluster kind's real MachineController, driven key by key. */
async function engineOver(api: MemoryApi, backend: ClusterBackend) {
  const kubeConfig = offlineKubeConfig();
  const informers = new InformerSet(kubeConfig, silentLogger, clock, {}, api.sources.sourceOf);
  const configs = informers.of(PROFILE_CACHES.providerConfigs);
  const backends = new Backends(backend, (name) => configs.get(name));
  const kinds = drivenKinds([clusterKind as MachineKind], CLUSTER_TIMING, {
    kubeConfig,
    informers,
    providerName: PROVIDER,
    environment: ENVIRONMENT,
    backend: backends.router,
    backends,
    adminAccess: new AdminAccessCache({ backend: backends.router, clock }),
    clock,
    log: silentLogger,
  });
  const driven = kinds.get("Cluster");
  if (!driven) throw new Error("no Cluster kind");
  const controller = new MachineController<MachineObject>({
    kind: driven.kind,
    context: driven.context,
    writer: api.writer(),
    recordEvents: false,
  });
  await informers.start();
  /** Reconciles every Cluster, round after round, until a round changes nothing (or `stop` says a key is done). */
  const settle = async (done: (key: string) => boolean = () => false) => {
    for (let round = 0; round < 12; round++) {
      const before = api.writes.length;
      for (const key of [...controller.keys()].sort()) {
        if (done(key)) continue;
        await controller.reconcile(key).catch(() => {});
      }
      if (api.writes.length === before) return;
    }
  };
  return { settle, stop: () => informers.stop() };
}

/** The timeline `plan` predicts for each Cluster. */
function predicted(result: Plan): Map<string, Happening[]> {
  const timelines = new Map<string, Happening[]>();
  for (const object of result.objects) {
    if (object.kind !== "Cluster") continue;
    const happenings: Happening[] = [];
    for (const step of object.steps) {
      for (const write of step.writes) happenings.push({ write: write.part, operations: write.operations });
      for (const { command } of step.commands) {
        const { kind, version: to } = command as { kind: string; version?: string };
        happenings.push({ command: kind, ...(to ? { version: to } : {}) });
      }
    }
    timelines.set(`${object.namespace}/${object.name}`, happenings);
  }
  return timelines;
}

/** Everything seen across the cases, to show the interesting branches are reached. */
const reached = new Map<string, number>();
const saw = (what: string) => reached.set(what, (reached.get(what) ?? 0) + 1);

async function predictionHolds(seeds: readonly ClusterSeed[], paced: Pace, change: ChangeSeed) {
  const backend = new SimulatedBackend({ ...paced, clock });
  const api = new MemoryApi([
    { resource: RESOURCES.ProviderConfig, object: config },
    { resource: RESOURCES.ClusterProfile, object: profile },
    ...seeds.map((seeded, index) => ({ resource: RESOURCES.Cluster, object: clusterOf(index, seeded) })),
  ]);
  // The world as the engine leaves it: settled, the Clusters asked to go marked for deletion and settled again.
  let timeline = new Map<string, Happening[]>();
  const into = (key: string, happening: Happening) =>
    timeline.set(key, [...(timeline.get(key) ?? []), happening]);
  const engine = await engineOver(api, commandsInto(backend, into));
  try {
    await engine.settle();
    const now = rfc3339(AT);
    seeds.forEach((seeded, index) => {
      const key = `${NAMESPACE}/c${index}`;
      const live = api.get(RESOURCES.Cluster, key);
      if (!seeded.deleted || !live) return;
      const effect = applyChange(
        { delete: { kind: "Cluster", namespace: NAMESPACE, name: `c${index}` } },
        live,
        now,
      );
      if (effect.after) api.put(RESOURCES.Cluster, effect.after);
      else api.put(RESOURCES.Cluster, live, true);
    });
    await engine.settle();
    for (const object of api.objects())
      if (object.kind === "Cluster")
        saw(`before: ${(object as Cluster).status?.providerStatus?.state ?? "none"}`);

    // The prediction, from the world as stored, with the same backend (read only) and the same instant.
    const proposed = changeOf(change, api, seeds.length);
    const backendCalls: string[] = [];
    const result = await plan([proposed], {
      kubeConfig: offlineKubeConfig(),
      providerName: PROVIDER,
      environment: ENVIRONMENT,
      backend: commandsInto(backend, (key, happening) => {
        if (!("look" in happening)) backendCalls.push(`${key} ${JSON.stringify(happening)}`);
      }),
      kinds: [clusterKind as MachineKind],
      kindSettings: CLUSTER_TIMING,
      sources: memorySources(api.objects()),
      clock,
    });
    expect(backendCalls, "plan issued a backend command").toEqual([]);
    for (const object of result.objects) saw(`plan: ${object.kind} ${object.outcome}`);
    if (result.summary.commands > 0) saw("plan: commands");
    if (result.objects.some((object) => object.steps.some((step) => step.writes.length > 0)))
      saw("plan: writes");
    expect(result.objects.map((object) => object.outcome)).not.toContain("unsettled");

    // The change applied for real (as the API server stores it), then the engine until each Cluster's first commands.
    timeline = new Map();
    const target = targetOf(proposed);
    const resource = target.kind === "Cluster" ? RESOURCES.Cluster : RESOURCES.ProviderConfig;
    const live = api.get(resource, objectKey({ metadata: target }));
    const effect = applyChange(proposed, live, rfc3339(AT));
    if (effect.after) api.put(resource, effect.after);
    else if (effect.before) api.put(resource, effect.before, true);
    api.writes.length = 0;
    const commanded = (key: string) => (timeline.get(key) ?? []).some((happening) => "command" in happening);
    const unsubscribe = recordWrites(api, into);
    await engine.settle(commanded);
    unsubscribe();

    const expected = predicted(result);
    const actual = new Map([...timeline].map(([key, happenings]) => [key, untilCommandsDone(happenings)]));
    for (const key of new Set([...expected.keys(), ...actual.keys()])) {
      expect(actual.get(key) ?? [], `Cluster ${key} after ${JSON.stringify(change)}`).toEqual(
        expected.get(key) ?? [],
      );
    }
  } finally {
    engine.stop();
  }
}

/** Writes of Clusters appended to their timelines as the writer records them. */
function recordWrites(api: MemoryApi, into: (key: string, happening: Happening) => void): () => void {
  const original = api.writes.push.bind(api.writes);
  api.writes.push = (...items) => {
    for (const item of items)
      if (item.plural === "clusters")
        into(item.key, {
          write: item.subresource === "status" ? "status" : "object",
          operations: item.operations,
        });
    return original(...items);
  };
  return () => {
    api.writes.push = original;
  };
}

/**
 * A timeline's writes and commands up to the end of its first step's commands (what a reconcile writes after them
 * depends on the backend's answer); looks only mark where one step's commands end.
 */
function untilCommandsDone(happenings: readonly Happening[]): Happening[] {
  const first = happenings.findIndex((happening) => "command" in happening);
  let end = first < 0 ? happenings.length : first;
  while (first >= 0 && end < happenings.length && "command" in (happenings[end] as Happening)) end++;
  return happenings.slice(0, end).filter((happening) => !("look" in happening));
}

describe("plan", () => {
  it("predicts, per Cluster, the writes and commands the engine makes when the change is applied (1,000 worlds)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(seed, { minLength: 1, maxLength: 4 }), pace, changeSeed, predictionHolds),
      { numRuns: Number(process.env.PLAN_RUNS ?? 1_000) },
    );
    // The interesting branches were reached: Clusters of every kind of state, and every kind of plan outcome.
    for (const branch of [
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
    ])
      expect(reached.get(branch) ?? 0, branch).toBeGreaterThan(0);
  }, 600_000);
});
