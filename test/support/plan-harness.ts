/**
 * What `plan`'s property tests share: the engine's real machine controllers over a MemoryApi, every write and
 * command they make recorded into one timeline per object, and the timeline a plan predicts, in the same terms.
 */
import { KubeConfig } from "@kubernetes/client-node";
import fc from "fast-check";
import { expect } from "vitest";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { Clock } from "../../src/api/clock.ts";
import type { ClusterProfile, SupportedVersion } from "../../src/api/cluster-profile.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import { objectKey } from "../../src/api/object-key.ts";
import type { ProviderConfig } from "../../src/api/provider-config.ts";
import { desiredClusterProfile } from "../../src/machines/cluster-profile/profile.ts";
import type { PatchOperation } from "../../src/machines/shared/json-patch.ts";
import { rfc3339 } from "../../src/machines/shared/rfc3339.ts";
import { SimulatedBackend, type SimulatedBackendOptions } from "../../src/providers/simulated.ts";
import { AdminAccessCache } from "../../src/runtime/admin-access-cache.ts";
import { Backends } from "../../src/runtime/backends.ts";
import { drivenKinds } from "../../src/runtime/engine.ts";
import type { WatchedObject } from "../../src/runtime/informer.ts";
import { InformerSet } from "../../src/runtime/informers.ts";
import { type KindSettingsByName, PROFILE_CACHES } from "../../src/runtime/kinds/registry.ts";
import { silentLogger } from "../../src/runtime/logger.ts";
import { MachineController } from "../../src/runtime/machine-controller.ts";
import type { MachineKind, MachineObject, StepContext } from "../../src/runtime/machine-kind.ts";
import { type Plan, type PlanChange, plan } from "../../src/runtime/plan/plan.ts";
import {
  applyChange,
  PLANNED_RESOURCES,
  resourceOfKind,
  targetOf,
} from "../../src/runtime/plan/plan-changes.ts";
import { memorySources } from "../../src/runtime/plan/planned-sources.ts";
import { aProviderConfig, stored } from "./builders.ts";
import { MemoryApi } from "./memory-api.ts";

/** A clock standing still at `at`: every step of both sides is taken at the same instant. */
export const stillClock = (at: number): Clock => ({ now: () => at, schedule: () => ({ cancel: () => {} }) });

/** The provider and environment of every plan property's world, and the instant its time stands still at. */
export const PLAN_PROVIDER = "engine-test";
export const PLAN_ENVIRONMENT = "test";
export const PLAN_AT = Date.parse("2026-11-28T12:00:00Z");
/** How long "never" is for a backend's pace in a world whose time stands still. */
export const PLAN_LONG = 600_000;
/** The clock of every plan property's world: standing still at {@link PLAN_AT}. */
export const PLAN_CLOCK = stillClock(PLAN_AT);
/** The requeue timing of a kind in a plan property's world. */
export const PLAN_TIMING = { timing: { pollMs: 100, retryMs: 200, resyncMs: 60_000 } };

/** The delays of the simulated backend that a plan property's world paces. */
export type PlanPace = Pick<
  SimulatedBackendOptions,
  "provisionDelayMs" | "updateDelayMs" | "deleteDelayMs" | "hibernateDelayMs"
>;

/** The simulated backend of a plan property's world: at `pace`, by the world's clock {@link PLAN_CLOCK}. */
export const planBackend = (pace: PlanPace): SimulatedBackend =>
  new SimulatedBackend({ ...pace, clock: PLAN_CLOCK });

/** The simulated backend's pace over `delays`: each command done at once or after {@link PLAN_LONG} (time stands still). */
export function planPace<const Delay extends keyof PlanPace>(
  ...delays: readonly Delay[]
): fc.Arbitrary<Record<Delay, number>> {
  const atOnceOrLong = Object.fromEntries(delays.map((delay) => [delay, fc.constantFrom(0, PLAN_LONG)]));
  return fc.record<Record<Delay, number>>(atOnceOrLong as { [K in Delay]: fc.Arbitrary<number> });
}

/** What a plan property's ProviderConfig offers unless it says otherwise. */
export const PLAN_OFFERED: readonly SupportedVersion[] = [{ version: "1.33.3" }, { version: "1.32.7" }];

/** The objects a MemoryApi starts with. */
export type MemoryObjects = ConstructorParameters<typeof MemoryApi>[0];

/**
 * The ProviderConfig `small` of a plan property's world, offering `offered` on the simulated backend, and the
 * ClusterProfile the engine publishes for it (its name is what a world's Clusters name as their profile); and the
 * store of such a world: a MemoryApi holding the ProviderConfig and the ClusterProfile, then `objects`.
 */
export function planProviderConfig(
  offered: readonly SupportedVersion[] = PLAN_OFFERED,
  defaultVersion?: string,
): {
  config: ProviderConfig;
  profile: ClusterProfile;
  profileName: string;
  memoryApi: (objects: MemoryObjects) => MemoryApi;
} {
  const config = stored(
    aProviderConfig({
      name: "small",
      providerRef: { name: PLAN_PROVIDER },
      supportedVersions: [...offered],
      ...(defaultVersion ? { defaultVersion } : {}),
    }),
    { uid: "c0nf1g00-0000-4000-8000-000000000001", resourceVersion: "1" },
  );
  const profile = desiredClusterProfile(
    config,
    { providerName: PLAN_PROVIDER, environment: PLAN_ENVIRONMENT, backends: ["simulated"] },
    [...offered],
    [],
  );
  const memoryApi = (objects: MemoryObjects) =>
    new MemoryApi([
      { resource: RESOURCES.ProviderConfig, object: config },
      { resource: RESOURCES.ClusterProfile, object: profile },
      ...objects,
    ]);
  return { config, profile, profileName: profile.metadata.name ?? "", memoryApi };
}

/** A KubeConfig that names an API server nobody listens at: nothing in a memory world may reach one. */
export function offlineKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "nowhere", server: "https://127.0.0.1:9", skipTLSVerify: true }],
    users: [{ name: "nobody" }],
    contexts: [{ name: "nowhere", cluster: "nowhere", user: "nobody" }],
    currentContext: "nowhere",
  });
  return kubeConfig;
}

/** What happened to one object, in order: a write (by part), a command (as the step gave it), or a look. */
export type Happening =
  | { readonly write: "object" | "status"; readonly operations: readonly PatchOperation[] }
  | { readonly command: unknown }
  /** The object looked at again (observe): the end of one step's commands. */
  | { readonly look: true };

/** A timeline's key: `<Kind> <namespace>/<name>`. */
export const timelineKey = (kind: string, key: string) => `${kind} ${key}`;

/** Whether commands are held (left unanswered), and how a held one tells `settle` to move on. */
interface Holding {
  on: boolean;
  held(): Promise<void>;
}

/**
 * How a kind's commands are carried out while a world is made (not recording): a stand-in for commands that
 * write through the API server (a memory world has none), given the kind's own `run` for the rest.
 */
export type SetupRun = (
  commands: readonly unknown[],
  object: MachineObject,
  run: (commands: readonly unknown[]) => Promise<void>,
) => Promise<void>;

/** `kind` with every look and every command of its reconciles told to `into` before it happens. */
function recordingCommands(
  kind: MachineKind,
  into: (key: string, happening: Happening) => void,
  holding: Holding,
  setupRun: SetupRun | undefined,
): MachineKind {
  const name = kind.definition.kind;
  return {
    ...kind,
    async open(object, context) {
      const work = await kind.open(object, context);
      if (!work) return undefined;
      /** The commands of this reconcile's latest step. */
      let stepCommands: readonly unknown[] = [];
      // Its methods by name (a kind's reconciliation may be a class instance): the same calls, with looks and commands told.
      return {
        observe: (current) => {
          into(timelineKey(name, objectKey(current)), { look: true });
          return work.observe(current);
        },
        step: (current, observation, stepContext) => {
          const step = work.step(current, observation, stepContext);
          stepCommands = step.commands;
          return step;
        },
        run: (commands, current, writer) => {
          const key = timelineKey(name, objectKey(current));
          if (holding.on) {
            // The controller runs a step's commands one at a time: the first is held, so all of them are told now.
            for (const command of stepCommands) into(key, { command });
            // Held: never answered, as in a plan (the reconcile waits for good; `settle` moves on).
            return holding.held();
          }
          const run = (some: readonly unknown[]) => work.run(some as never, current, writer);
          return setupRun ? setupRun(commands, current, run) : run(commands);
        },
        ...(work.unobserved
          ? {
              unobserved: (current: MachineObject, failure: string, stepContext: StepContext) =>
                work.unobserved?.(current, failure, stepContext),
            }
          : {}),
      };
    },
  };
}

/** How to build the engine of a memory world. */
export interface MemoryEngineOptions {
  readonly kinds: readonly MachineKind[];
  readonly kindSettings: KindSettingsByName;
  readonly backend: ClusterBackend;
  readonly providerName: string;
  readonly environment: string;
  readonly clock: Clock;
  /** By kind: how its commands are carried out while the world is made (default: its own `run`). */
  readonly setupRuns?: Readonly<Record<string, SetupRun>>;
}

/** How to build the engine of a plan property's world: `engine`, as its provider, in its environment, by its clock. */
export const planEngineOptions = (
  engine: Pick<MemoryEngineOptions, "kinds" | "kindSettings" | "backend" | "setupRuns">,
): MemoryEngineOptions => ({
  ...engine,
  providerName: PLAN_PROVIDER,
  environment: PLAN_ENVIRONMENT,
  clock: PLAN_CLOCK,
});

/**
 * The engine's machine controllers (those of `kinds`) over `api`, driven key by key; their writes (at their
 * MachineWriter) and commands recorded into `timelines` while `recording` is on.
 */
export async function memoryEngine(api: MemoryApi, options: MemoryEngineOptions) {
  const timelines = new Map<string, Happening[]>();
  let recording = false;
  const into = (key: string, happening: Happening) => {
    if (recording) timelines.set(key, [...(timelines.get(key) ?? []), happening]);
  };
  const kubeConfig = offlineKubeConfig();
  const { clock } = options;
  const informers = new InformerSet(kubeConfig, silentLogger, clock, {}, api.sources.sourceOf);
  const configs = informers.of(PROFILE_CACHES.providerConfigs);
  const backends = new Backends(options.backend, (name) => configs.get(name));
  /** Resolves the reconcile `settle` waits for when its commands are held. */
  let moveOn: () => void = () => {};
  const holding: Holding = {
    on: false,
    held: () => {
      moveOn();
      return new Promise<void>(() => {});
    },
  };
  const kinds = drivenKinds(
    options.kinds.map((kind) =>
      recordingCommands(kind, into, holding, options.setupRuns?.[kind.definition.kind]),
    ),
    options.kindSettings,
    {
      kubeConfig,
      informers,
      providerName: options.providerName,
      environment: options.environment,
      backend: backends.router,
      backends,
      adminAccess: new AdminAccessCache({ backend: backends.router, clock }),
      clock,
      log: silentLogger,
    },
  );
  const kindOfPlural = new Map<string, string>(
    Object.entries(PLANNED_RESOURCES).map(([kind, resource]) => [resource.plural, kind] as const),
  );
  const writer = api.writer((write) =>
    into(timelineKey(kindOfPlural.get(write.plural) ?? write.plural, write.key), {
      write: write.subresource === "status" ? "status" : "object",
      operations: write.operations,
    }),
  );
  const controllers = [...kinds.values()].map(({ kind, context }) => ({
    name: kind.definition.kind,
    controller: new MachineController<MachineObject>({ kind, context, writer, recordEvents: false }),
    /** The object's group of reconciles that run one after the other (the kind's `serialize`), if any. */
    groupOf: (key: string) => {
      const object = informers.of(kind.cache).get(key) as MachineObject | undefined;
      const group = object ? kind.serialize?.(object, context) : undefined;
      return group === undefined ? undefined : `${kind.definition.kind}|${group}`;
    },
  }));
  await informers.start();
  /** Whether the object's timeline has a command: its reconciles after that depend on the backend's answers. */
  const commanded = (key: string) => (timelines.get(key) ?? []).some((happening) => "command" in happening);
  return {
    timelines,
    /**
     * Records from now on (a fresh timeline), or stops; while recording, commands are held: recorded, never run
     * nor answered, so the engine goes on exactly as far as a plan can see.
     */
    record(on: boolean) {
      recording = on;
      holding.on = on;
      timelines.clear();
    },
    /**
     * Reconciles every object of every kind, round after round, until a round writes nothing; while recording,
     * an object that issued commands is left alone after them.
     */
    async settle() {
      /** Groups (the kind's `serialize`) whose reconcile is held at its commands: the others of it wait for good. */
      const heldGroups = new Set<string>();
      for (let round = 0; round < 12; round++) {
        const before = api.writes.length;
        for (const { name, controller, groupOf } of controllers) {
          for (const key of [...controller.keys()].sort()) {
            if (recording && commanded(timelineKey(name, key))) continue;
            const group = groupOf(key);
            // As in the engine: its reconcile would wait for the held one of its group, which never ends here.
            if (group !== undefined && heldGroups.has(group)) continue;
            const heldCommands = new Promise<void>((resolve) => {
              moveOn = resolve;
            });
            await Promise.race([controller.reconcile(key).catch(() => {}), heldCommands]);
            if (recording && group !== undefined && commanded(timelineKey(name, key))) heldGroups.add(group);
          }
        }
        if (api.writes.length === before) return;
      }
    },
    stop: () => informers.stop(),
  };
}

/** The timeline `plan` predicts for each object of the machine kinds, keyed as the engine's. */
export function predictedTimelines(result: Plan): Map<string, Happening[]> {
  const timelines = new Map<string, Happening[]>();
  for (const object of result.objects) {
    const happenings: Happening[] = [];
    for (const step of object.steps) {
      if (step.by) continue; // another controller's writes: not the machines'
      for (const write of step.writes) happenings.push({ write: write.part, operations: write.operations });
      for (const { command } of step.commands) happenings.push({ command });
    }
    if (happenings.length > 0)
      timelines.set(
        timelineKey(object.kind, object.namespace ? `${object.namespace}/${object.name}` : object.name),
        happenings,
      );
  }
  return timelines;
}

/**
 * A timeline's writes and commands up to the end of its first step's commands (what a reconcile writes after them
 * depends on the backend's answer); looks only mark where one step's commands end.
 */
export function untilCommandsDone(happenings: readonly Happening[]): Happening[] {
  const first = happenings.findIndex((happening) => "command" in happening);
  let end = first < 0 ? happenings.length : first;
  while (first >= 0 && end < happenings.length && "command" in (happenings[end] as Happening)) end++;
  return happenings.slice(0, end).filter((happening) => !("look" in happening));
}

/** The engine's timelines as compared with a plan's: each up to its first commands, empty ones left out. */
export function actualTimelines(
  timelines: ReadonlyMap<string, readonly Happening[]>,
): Map<string, Happening[]> {
  return new Map(
    [...timelines]
      .map(([key, happenings]) => [key, untilCommandsDone(happenings)] as const)
      .filter(([, happenings]) => happenings.length > 0),
  );
}

/** The backend methods that change something (the contract's commands); every other method only reads. */
const MUTATING = new Set([
  "create",
  "update",
  "delete",
  "hibernate",
  "wake",
  "trustOidcIssuers",
  "importCluster",
]);

/** `backend` as it is, with every call of a method that changes something listed in `calls`. */
export function withMutationsListed(backend: ClusterBackend): { backend: ClusterBackend; calls: string[] } {
  const calls: string[] = [];
  const listed = new Proxy(backend, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        if (MUTATING.has(property)) calls.push(property);
        return value.apply(target, args);
      };
    },
  });
  return { backend: listed, calls };
}

/** The engine of a memory world, as {@link memoryEngine} makes it. */
export type MemoryEngine = Awaited<ReturnType<typeof memoryEngine>>;

/** How often each interesting branch was reached across a property's cases; a branch never reached fails. */
export class Branches {
  readonly #reached = new Map<string, number>();

  saw(what: string): void {
    this.#reached.set(what, (this.#reached.get(what) ?? 0) + 1);
  }

  /** How often each branch was reached, by name. */
  counts(): ReadonlyMap<string, number> {
    return new Map([...this.#reached].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** Every one of `branches` reached at least once. */
  expectReached(branches: readonly string[]): void {
    for (const branch of branches) expect(this.#reached.get(branch) ?? 0, branch).toBeGreaterThan(0);
  }
}

/**
 * The comparison every plan property makes once its world is settled: `plan` of `proposed` over the world as
 * stored (the same backend, read only: a command fails the case), then the change applied as the API server
 * stores it and the engine settled, recording; the writes and commands per object equal the plan's, up to each
 * object's first commands, and objects the plan leaves out get none. Returns the plan.
 */
export async function expectPlanPredictsEngine(
  api: MemoryApi,
  engine: MemoryEngine,
  options: MemoryEngineOptions,
  proposed: PlanChange | readonly PlanChange[],
  branches: Branches,
): Promise<Plan> {
  const changes: readonly PlanChange[] = Array.isArray(proposed) ? proposed : [proposed];
  const { setupRuns: _, backend, ...world } = options;
  const listed = withMutationsListed(backend);
  const result = await plan(changes, {
    ...world,
    kubeConfig: offlineKubeConfig(),
    backend: listed.backend,
    sources: memorySources(api.objects()),
  });
  expect(listed.calls, "plan issued a backend command").toEqual([]);
  for (const object of result.objects) branches.saw(`plan: ${object.kind} ${object.outcome}`);
  if (result.summary.commands > 0) branches.saw("plan: commands");
  if (result.objects.some((object) => object.steps.some((step) => step.writes.length > 0)))
    branches.saw("plan: writes");
  expect(result.objects.map((object) => object.outcome)).not.toContain("unsettled");

  engine.record(true);
  const now = rfc3339(options.clock.now());
  for (const change of changes) {
    const target = targetOf(change);
    const resource = resourceOfKind(target.kind, target.apiVersion);
    const effect = applyChange(change, api.get(resource, objectKey({ metadata: target })), now);
    if (effect.after) api.put(resource, effect.after);
    else if (effect.before) api.put(resource, effect.before, true);
  }
  await engine.settle();

  const expected = predictedTimelines(result);
  const actual = actualTimelines(engine.timelines);
  for (const key of new Set([...expected.keys(), ...actual.keys()]))
    expect(actual.get(key) ?? [], `${key} after ${JSON.stringify(proposed)}`).toEqual(
      expected.get(key) ?? [],
    );
  return result;
}

/** Marks `object` for deletion as the API server would on a delete (gone at once without finalizers). */
export function markDeleted(
  api: MemoryApi,
  object: WatchedObject & { readonly kind?: string; readonly apiVersion?: string },
  at: number,
): void {
  const target = {
    kind: object.kind ?? "",
    ...(object.metadata?.namespace ? { namespace: object.metadata.namespace } : {}),
    name: object.metadata?.name ?? "",
  };
  const resource = resourceOfKind(target.kind, object.apiVersion);
  const effect = applyChange({ delete: target }, object, rfc3339(at));
  if (effect.after) api.put(resource, effect.after);
  else api.put(resource, object, true);
}

/**
 * The engine of a memory world over `api` (see {@link memoryEngine}), the world left as the engine leaves it: settled,
 * then the objects of `deleted.resource` at `deleted.keys` that still exist marked for deletion as the API server
 * would ({@link markDeleted}, at {@link PLAN_AT}), and settled again. Stopped if that fails.
 */
export async function settledMemoryEngine(
  api: MemoryApi,
  options: MemoryEngineOptions,
  deleted: { readonly resource: { readonly plural: string }; readonly keys: readonly string[] },
): Promise<MemoryEngine> {
  const engine = await memoryEngine(api, options);
  try {
    await engine.settle();
    for (const key of deleted.keys) {
      const live = api.get(deleted.resource, key);
      if (live) markDeleted(api, live, PLAN_AT);
    }
    await engine.settle();
    return engine;
  } catch (error) {
    engine.stop();
    throw error;
  }
}

/** What a plan property's world runs: `kinds` with their settings, on the simulated backend at `pace`. */
export interface PlanEngine extends Pick<MemoryEngineOptions, "kinds" | "kindSettings" | "setupRuns"> {
  readonly pace: PlanPace;
}

/**
 * The engine of a plan property's world over `api` ({@link planEngineOptions}, its backend {@link planBackend}),
 * settled as {@link settledMemoryEngine} leaves it; and the options it was made with, for the plan to be made with.
 */
export async function settledPlanEngine(
  api: MemoryApi,
  { pace, ...engine }: PlanEngine,
  deleted: Parameters<typeof settledMemoryEngine>[2],
): Promise<{ engine: MemoryEngine; options: MemoryEngineOptions }> {
  const options = planEngineOptions({ ...engine, backend: planBackend(pace) });
  return { engine: await settledMemoryEngine(api, options, deleted), options };
}
