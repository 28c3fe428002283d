/**
 * `plan`: what the engine would write and which backend commands it would issue if proposed changes were applied,
 * found by running each affected object's own kind (`open`, `observe`, the pure `step`) over the live objects
 * with the changes applied in memory. Nothing is written to the API server and no backend command is run.
 */
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { ClusterRequestStatus } from "../../api/cluster-request.ts";
import { ROLLOUT_KIND } from "../../api/constants/rollout.ts";
import { RESOURCES, type ResourceKind } from "../../api/constants.ts";
import { isNotFound } from "../../api/error-message.ts";
import { isPaused } from "../../api/move.ts";
import { objectKey } from "../../api/object-key.ts";
import type { ProviderConfig } from "../../api/provider-config.ts";
import type { Rollout } from "../../api/rollout.ts";
import { prepareAccessRequest } from "../../machines/access-request/preparation.ts";
import { configOwnership } from "../../machines/cluster-profile/ownership.ts";
import { desiredClusterProfile, profileWrite } from "../../machines/cluster-profile/profile.ts";
import { profileHolder, profileTaken } from "../../machines/cluster-profile/profile-holder.ts";
import { applied, diff, type Json, type PatchOperation } from "../../machines/shared/json-patch.ts";
import { rfc3339 } from "../../machines/shared/rfc3339.ts";
import { AdminAccessCache } from "../admin-access-cache.ts";
import { changesTo } from "../api-server/patch-object.ts";
import { type BackendSource, Backends } from "../backends.ts";
import { type Clock, systemClock } from "../clock.ts";
import { type DrivenKind, drivenKinds } from "../engine.ts";
import type { WatchedObject } from "../informer.ts";
import { type CacheSourceOf, type CacheSpec, InformerSet, resourceCache } from "../informers.ts";
import { ACCESS_REQUEST_CACHES } from "../kinds/access-request/caches.ts";
import { resolveAccessTarget } from "../kinds/access-request/preparation-controller.ts";
import { CLUSTER_CACHES } from "../kinds/cluster/caches.ts";
import { CLUSTER_REQUEST_CACHES } from "../kinds/cluster-request/caches.ts";
import { type KindSettingsByName, MACHINE_KINDS, PROFILE_CACHES } from "../kinds/registry.ts";
import type { RolloutObservation } from "../kinds/rollout/kind.ts";
import { errorMessage, type Logger, silentLogger } from "../logger.ts";
import { cachesOf, type MachineKind, type MachineObject } from "../machine-kind.ts";
import {
  applyChange,
  describeTarget,
  type PlanChange,
  PlanChangeError,
  resourceOfKind,
  targetOf,
} from "./plan-changes.ts";
import {
  type Plan,
  type PlannedObject,
  type PlannedOutcome,
  type PlannedStep,
  type PlannedWrite,
  summarized,
} from "./planned.ts";
import { apiServerSources, PlannedSources, type ResourceId } from "./planned-sources.ts";
import { type PlannedRollout, rolloutStages } from "./rollout-stages.ts";

export { type ChangeTarget, type Manifest, type PlanChange, PlanChangeError } from "./plan-changes.ts";
export type {
  Plan,
  PlannedCommand,
  PlannedObject,
  PlannedOutcome,
  PlannedStep,
  PlannedWrite,
  PlanSummary,
} from "./planned.ts";
export type { PlannedRollout, PlannedRolloutStage, PlannedRolloutTarget } from "./rollout-stages.ts";

/** Steps of one object before a plan gives up on it settling (a machine that keeps changing its object). */
const DEFAULT_MAX_STEPS = 10;

/** What a plan needs: where the live objects are, and the engine's settings (those of `run`). */
export interface PlanOptions {
  readonly kubeConfig: KubeConfig;
  /** `--provider-name`: as the engine, the plan acts only on this provider's objects. */
  readonly providerName: string;
  /** `--environment` (default: `default`). */
  readonly environment?: string;
  /** The backend(s) asked to observe, read-only; never told to do anything. */
  readonly backend: BackendSource;
  /** The kinds to plan (default: every registered kind). */
  readonly kinds?: readonly MachineKind[];
  /** The engine's `kindSettings` (e.g. a scheduler configuration, pools), so its kinds decide as it would. */
  readonly kindSettings?: KindSettingsByName;
  /** As the engine's `--namespace` and `--watch-filter`. */
  readonly namespace?: string;
  readonly watchFilter?: string;
  /** The time the steps are taken at (default: the system clock). */
  readonly clock?: Clock;
  readonly log?: Logger;
  /** Where the live objects are listed (default: the API server of `kubeConfig`); e.g. a world in memory. */
  readonly sources?: CacheSourceOf;
  /** Steps of one object before it counts as not settling (default 10). */
  readonly maxStepsPerObject?: number;
}

/** An object's record while planning. */
interface Tracked {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  change?: PlannedObject["change"];
  readonly steps: PlannedStep[];
  outcome?: PlannedOutcome;
  message?: string;
  /** No further step: its end is known or cannot be. */
  final: boolean;
  /** A Rollout the changes create or change: its run over the Clusters its first step saw. */
  rollout?: PlannedRollout;
}

/**
 * Plans `changes`: applies them in memory to the live objects and steps every object they affect, and every
 * object those steps affect in turn (the kinds' own wakes), until each settles.
 *
 * Guarantees: no write to the API server (its objects are listed, nothing else; Events are not recorded) and no
 * backend command (the backend is asked to observe and for its offer, read-only calls by the backend contract).
 * Each step is the kind's own (`open`, `observe`, `step`) and each write its diff as the runtime makes it
 * (`changesTo`), in the runtime's order: the object, then, without commands, its status.
 *
 * Caveats: a command's outcome is not known (the object stops there: `awaitsCommands`); changes are applied
 * without the API server's defaulting, validation and admission; the ProviderConfig controller is followed to
 * the ClusterProfile it writes, not to its own status or its claim of a free config.
 */
export async function plan(changes: readonly PlanChange[], options: PlanOptions): Promise<Plan> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? silentLogger;
  const sources = new PlannedSources(options.sources ?? apiServerSources(options.kubeConfig));
  const informers = new InformerSet(
    options.kubeConfig,
    log,
    clock,
    {
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(options.watchFilter ? { watchFilter: options.watchFilter } : {}),
    },
    sources.sourceOf,
  );
  const configs = informers.of(PROFILE_CACHES.providerConfigs);
  const backends = new Backends(options.backend, (name) => configs.get(name));
  const shared = {
    kubeConfig: options.kubeConfig,
    informers,
    providerName: options.providerName,
    environment: options.environment ?? "default",
    backend: backends.router,
    backends,
    adminAccess: new AdminAccessCache({ backend: backends.router, clock }),
    clock,
    log,
  };
  const kinds = drivenKinds(options.kinds ?? MACHINE_KINDS, options.kindSettings, shared);
  // The caches of every kind a change names, for the object as stored now.
  for (const change of changes) {
    const { kind, apiVersion } = targetOf(change);
    // An unknown kind is refused before anything is read.
    informers.of(cacheOfKind(kinds, kind, resourceOfKind(kind, apiVersion)));
  }
  informers.of(PROFILE_CACHES.profiles);
  for (const { kind, context } of kinds.values()) await kind.start?.(context);
  try {
    await informers.start();
    const run = new PlanRun(
      kinds,
      sources,
      informers,
      shared,
      clock,
      options.maxStepsPerObject ?? DEFAULT_MAX_STEPS,
    );
    return await run.plan(changes);
  } finally {
    informers.stop();
    for (const { kind, context } of kinds.values()) kind.stop?.(context);
    if ("load" in options.backend) await backends.close(); // only the backends the plan made itself
  }
}

/** The cache a kind's objects are read from: the one a driven kind declares whole, else all of them. */
function cacheOfKind(
  kinds: ReadonlyMap<string, DrivenKind>,
  kind: string,
  resource: ResourceId & { readonly namespaced: boolean },
): CacheSpec<WatchedObject> {
  const same = (spec: CacheSpec<WatchedObject>) =>
    spec.kind === kind && spec.resource.group === resource.group && spec.resource.plural === resource.plural;
  for (const driven of kinds.values())
    for (const spec of cachesOf(driven.kind)) if (same(spec) && !spec.labelSelector) return spec;
  const named = (RESOURCES as Record<string, ResourceId | undefined>)[kind];
  return named?.group === resource.group
    ? resourceCache(kind as ResourceKind)
    : { name: `${kind}.${resource.group}`, kind, resource };
}

/** How soon the preparation controller looks again at an unresolved reference (its default). */
const PREPARATION_RETRY_MS = 10_000;

/** The engine's shared context parts a plan run uses. */
interface Shared {
  readonly kubeConfig: KubeConfig;
  readonly providerName: string;
  readonly environment: string;
  readonly backends: Backends;
}

/** One plan: a queue of keys to step, as the engine's controllers would be woken, and what each step did. */
class PlanRun {
  readonly #kinds: ReadonlyMap<string, DrivenKind>;
  readonly #sources: PlannedSources;
  readonly #informers: InformerSet;
  readonly #shared: Shared;
  readonly #clock: Clock;
  readonly #maxSteps: number;
  /** Work to do, in order, deduplicated (as a work queue): `<kind>|<key>`. */
  readonly #queue = new Map<string, () => Promise<void>>();
  readonly #tracked = new Map<string, Tracked>();
  /**
   * Groups of reconciles that run one after the other (a kind's `serialize`, e.g. the requests of a purpose with a
   * limited tenancyCount), `<kind>|<group>`, held by the object that awaits its commands: named as `<Kind> <key>`.
   */
  readonly #heldGroups = new Map<string, string>();

  constructor(
    kinds: ReadonlyMap<string, DrivenKind>,
    sources: PlannedSources,
    informers: InformerSet,
    shared: Shared,
    clock: Clock,
    maxSteps: number,
  ) {
    this.#kinds = kinds;
    this.#sources = sources;
    this.#informers = informers;
    this.#shared = shared;
    this.#clock = clock;
    this.#maxSteps = maxSteps;
  }

  async plan(changes: readonly PlanChange[]): Promise<Plan> {
    this.#listen();
    const now = rfc3339(this.#clock.now());
    for (const change of changes) {
      const target = targetOf(change);
      const resource = resourceOfKind(target.kind, target.apiVersion);
      const key = objectKey({ metadata: target });
      const live = this.#informers.of(cacheOfKind(this.#kinds, target.kind, resource)).get(key);
      const effect = applyChange(change, live, now);
      const tracked = this.#track(target.kind, target);
      if (tracked.change !== undefined)
        throw new PlanChangeError(`${describeTarget(target)} is changed twice; give one change per object`);
      tracked.change = effect.verb;
      if (effect.verb === "none") continue;
      if (effect.after) this.#sources.put(resource, effect.after);
      else if (effect.before) {
        this.#sources.put(resource, effect.before, true);
        tracked.outcome = "deleted";
        tracked.final = true;
      }
    }
    for (let work = this.#next(); work; work = this.#next()) await work();
    return this.#result();
  }

  /** Wakes as the engine's controllers are woken: an object's own change, and each kind's wakes. */
  #listen(): void {
    for (const driven of this.#kinds.values()) {
      const { kind, context } = driven;
      this.#informers.of(kind.cache).on((event) => this.#enqueueStep(driven, event.key));
      for (const related of kind.wakes) {
        this.#informers.of(related.cache).on((event) => {
          for (const key of related.keys(event.object as never, context)) this.#enqueueStep(driven, key);
        });
      }
    }
    // The ProviderConfig controller keeps each config's ClusterProfile in step: a plan follows it there.
    this.#informers
      .of(PROFILE_CACHES.providerConfigs)
      .on((event) => this.#enqueue(`ProviderConfig|${event.key}`, () => this.#planProfile(event.key)));
    // The AccessRequest kind's preparation controller (unless `prepare: false`) labels requests for their provider.
    const access = this.#kinds.get("AccessRequest");
    if (access && access.settings.prepare !== false)
      this.#informers
        .of(ACCESS_REQUEST_CACHES.accessRequests)
        .on((event) =>
          this.#enqueue(`AccessRequest preparation|${event.key}`, () => this.#planPreparation(event.key)),
        );
  }

  #next(): (() => Promise<void>) | undefined {
    const first = this.#queue.entries().next();
    if (first.done) return undefined;
    const [id, work] = first.value;
    this.#queue.delete(id);
    return work;
  }

  #enqueue(id: string, work: () => Promise<void>): void {
    if (!this.#queue.has(id)) this.#queue.set(id, work);
  }

  #enqueueStep(driven: DrivenKind, key: string): void {
    this.#enqueue(`${driven.kind.definition.kind}|${key}`, () => this.#step(driven, key));
  }

  #track(kind: string, reference: { readonly namespace?: string; readonly name?: string }): Tracked {
    const id = `${kind}|${objectKey({ metadata: reference })}`;
    let tracked = this.#tracked.get(id);
    if (!tracked) {
      tracked = {
        kind,
        ...(reference.namespace ? { namespace: reference.namespace } : {}),
        name: reference.name ?? "",
        steps: [],
        final: false,
      };
      this.#tracked.set(id, tracked);
    }
    return tracked;
  }

  /** One reconcile of one object, as the machine controller takes it, with its writes applied in memory only. */
  async #step({ kind, context }: DrivenKind, key: string): Promise<void> {
    const object = this.#informers.of(kind.cache).get(key) as MachineObject | undefined;
    if (!object) return;
    const name = kind.definition.kind;
    const known = this.#tracked.get(`${name}|${key}`);
    if (known?.final) return;
    let work: Awaited<ReturnType<typeof kind.open>>;
    try {
      work = await kind.open(object, context);
    } catch (error) {
      // The engine would retry this reconcile with backoff; what it would then do cannot be planned.
      const tracked = known ?? this.#track(name, object.metadata);
      tracked.outcome = "lookFailed";
      tracked.message = `opening its reconcile failed: ${errorMessage(error)}`;
      tracked.final = true;
      return;
    }
    if (!work) {
      if (known) known.outcome ??= "notOurs";
      return;
    }
    const tracked = known ?? this.#track(name, object.metadata);
    if (isPaused(object)) {
      tracked.outcome = "paused";
      tracked.final = true;
      return;
    }
    // Its group's reconciles run one after the other, and one of them waits for its commands' answers: so does
    // this one (the engine takes it after them, from what they made), which a plan cannot follow.
    const serialized = kind.serialize?.(object, context);
    const group = serialized === undefined ? undefined : `${name}|${serialized}`;
    const holder = group === undefined ? undefined : this.#heldGroups.get(group);
    if (holder !== undefined) {
      tracked.outcome = "awaitsCommands";
      tracked.message = `it decides after ${holder}'s commands, from what they make (the reconciles of group ${serialized} run one after the other)`;
      tracked.final = true;
      return;
    }
    if (tracked.steps.length >= this.#maxSteps) {
      tracked.outcome = "unsettled";
      tracked.message = `still writing after ${this.#maxSteps} steps; the plan stops following it here`;
      tracked.final = true;
      return;
    }
    let observation: unknown;
    try {
      observation = await work.observe(object);
    } catch (error) {
      tracked.outcome = "lookFailed";
      tracked.message = `looking at it failed: ${errorMessage(error)}`;
      tracked.final = true;
      return;
    }
    // A Rollout the changes made or changed: its whole run, from what its first step sees (the Clusters as frozen).
    if (name === ROLLOUT_KIND && (tracked.change === "create" || tracked.change === "update"))
      tracked.rollout ??= rolloutStages(
        object as Rollout,
        (observation as RolloutObservation).clusters,
        (observation as RolloutObservation).profiles,
        (observation as RolloutObservation).providerConfig,
      );
    const nowMs = this.#clock.now();
    const step = work.step(object, observation, { now: rfc3339(nowMs), nowMs, lastError: undefined });
    const objectPatch = [
      ...changesTo(object, "metadata", step.desired.metadata),
      ...changesTo(object, "spec", step.desired.spec),
    ];
    const statusPatch = changesTo(object, "status", step.desired.status);
    if (step.commands.length === 0 && objectPatch.length === 0 && statusPatch.length === 0) {
      tracked.outcome = "settled";
      return;
    }
    const commands = step.commands.map((command) => ({
      description: kind.describe(command as never),
      command,
    }));
    const writes: PlannedWrite[] =
      objectPatch.length > 0 ? [{ part: "object", operations: objectPatch }] : [];
    // The metadata goes first (a finalizer before any command); the status follows only a step without commands.
    let stored = this.#write(kind.cache.resource, object, objectPatch);
    if (step.commands.length === 0 && stored && statusPatch.length > 0) {
      writes.push({ part: "status", operations: statusPatch });
      stored = this.#write(kind.cache.resource, stored, statusPatch);
    }
    tracked.steps.push({
      from: step.previousState,
      to: step.state,
      writes,
      commands,
      ...(step.commands.length > 0 && statusPatch.length > 0 ? { statusIfUnanswered: statusPatch } : {}),
      events: step.events,
    });
    if (!stored) {
      tracked.outcome = "deleted";
      tracked.final = true;
    } else if (step.commands.length > 0) {
      tracked.outcome = "awaitsCommands";
      tracked.message = `what follows depends on what is answered to ${commands.map((c) => c.description).join(", ")}`;
      tracked.final = true;
      if (group !== undefined) this.#heldGroups.set(group, `${name} ${key}`);
    } else {
      tracked.outcome = undefined;
    }
  }

  /**
   * `operations` applied to `object` in memory, as the API server would store them (a new resourceVersion; gone
   * when being deleted with no finalizer left); every cache of its resource is told. Undefined: gone.
   */
  #write<T extends WatchedObject>(resource: ResourceId, object: T, operations: readonly PatchOperation[]) {
    if (operations.length === 0) return object;
    const next = applied(object, operations) as T & {
      metadata: { resourceVersion?: string; deletionTimestamp?: string; finalizers?: string[] };
    };
    const resourceVersion = String(Number(next.metadata.resourceVersion ?? "0") + 1);
    const stored = { ...next, metadata: { ...next.metadata, resourceVersion } };
    const gone =
      stored.metadata.deletionTimestamp !== undefined && (stored.metadata.finalizers ?? []).length === 0;
    this.#sources.put(resource, stored, gone);
    return gone ? undefined : stored;
  }

  /** The preparation controller's writes of one AccessRequest (its resolution and pure step shared with it). */
  async #planPreparation(key: string): Promise<void> {
    const requests = this.#informers.of(ACCESS_REQUEST_CACHES.accessRequests);
    const request = requests.get(key);
    if (!request || request.metadata.deletionTimestamp || isPaused(request)) return;
    const tracked = this.#tracked.get(`AccessRequest|${key}`);
    if (tracked?.final) return;
    const requestCache = this.#informers.declared(CLUSTER_REQUEST_CACHES.clusterRequests);
    const resolution = await resolveAccessTarget(request, {
      cluster: (clusterKey) => this.#informers.of(CLUSTER_CACHES.clusters).get(clusterKey),
      profile: (name) => this.#informers.of(PROFILE_CACHES.profiles).get(name),
      // Read from the plan's cache when the engine drives ClusterRequests (the plan's changes are there), else as is.
      clusterRequest: async (ref) =>
        requestCache ? requestCache.get(objectKey({ metadata: ref })) : this.#readClusterRequest(ref),
    });
    const result = prepareAccessRequest(request, resolution, this.#clock.now(), PREPARATION_RETRY_MS);
    const resource = ACCESS_REQUEST_CACHES.accessRequests.resource;
    const record = this.#track("AccessRequest", request.metadata);
    if (result.expired) {
      record.steps.push({ by: "preparation", from: "", to: "", writes: [], commands: [], events: [] });
      this.#sources.put(resource, request, true);
      record.outcome = "deleted";
      record.final = true;
      return;
    }
    if (result.objectPatch.length === 0 && result.statusPatch.length === 0) return;
    const writes: PlannedWrite[] = [];
    let stored: WatchedObject | undefined = request;
    if (result.objectPatch.length > 0) {
      writes.push({ part: "object", operations: result.objectPatch });
      stored = this.#write(resource, stored, result.objectPatch);
    }
    if (stored && result.statusPatch.length > 0) {
      writes.push({ part: "status", operations: result.statusPatch });
      this.#write(resource, stored, result.statusPatch);
    }
    record.steps.push({ by: "preparation", from: "", to: "", writes, commands: [], events: [] });
  }

  /** A ClusterRequest as stored (read-only), for preparation when the engine does not drive ClusterRequests. */
  async #readClusterRequest(ref: { readonly namespace?: string; readonly name?: string }) {
    try {
      return (await this.#shared.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
        ...RESOURCES.ClusterRequest,
        namespace: ref.namespace ?? "",
        name: ref.name ?? "",
      })) as { status?: ClusterRequestStatus };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** The ProviderConfig controller's write of a config's ClusterProfile (pure parts shared with it). */
  async #planProfile(configName: string): Promise<void> {
    const config = this.#informers.of(PROFILE_CACHES.providerConfigs).get(configName) as
      | ProviderConfig
      | undefined;
    if (!config) return;
    const owner = {
      providerName: this.#shared.providerName,
      environment: this.#shared.environment,
      backends: this.#shared.backends.names,
    };
    if (configOwnership(config, owner) !== "ours" || !this.#shared.backends.serves(config.spec.backend))
      return;
    let offer: { versions: Parameters<typeof desiredClusterProfile>[2]; traits: readonly string[] };
    try {
      const backend = await this.#shared.backends.forConfig(config);
      offer = backend.readOffer
        ? await backend.readOffer(config)
        : { versions: backend.supportedVersions(config), traits: backend.traits(config) };
    } catch {
      return; // the config's problem goes on its status, which a plan does not follow; no profile changes
    }
    const desired = desiredClusterProfile(config, owner, offer.versions, offer.traits);
    const profiles = this.#informers.of(PROFILE_CACHES.profiles);
    const stored = profiles.get(desired.metadata.name ?? "") as ClusterProfile | undefined;
    if (profileTaken(profileHolder(stored, configName, owner.providerName))) return;
    const write = profileWrite(stored, desired);
    if (!write) return;
    const tracked = this.#track("ClusterProfile", desired.metadata);
    const resource = PROFILE_CACHES.profiles.resource;
    if ("create" in write || !stored) {
      tracked.change ??= "create";
      tracked.steps.push({
        by: "profiles",
        from: "",
        to: "",
        writes: [{ part: "object", operations: diff({}, desired as unknown as Json) }],
        commands: [],
        events: [],
      });
      this.#sources.put(resource, { ...desired, metadata: { ...desired.metadata, resourceVersion: "1" } });
    } else {
      tracked.steps.push({
        by: "profiles",
        from: "",
        to: "",
        writes: [{ part: "object", operations: write.patch }],
        commands: [],
        events: [],
      });
      this.#write(resource, stored, write.patch);
    }
    tracked.outcome = "settled";
  }

  #result(): Plan {
    // Objects woken that would see no write, no command and no change of their own are left out.
    const touched = [...this.#tracked.values()].filter(
      (tracked) =>
        tracked.steps.length > 0 ||
        tracked.change !== undefined ||
        !["settled", "notOurs", undefined].includes(tracked.outcome),
    );
    const objects: PlannedObject[] = touched.map((tracked) => ({
      kind: tracked.kind,
      ...(tracked.namespace ? { namespace: tracked.namespace } : {}),
      name: tracked.name,
      ...(tracked.change ? { change: tracked.change } : {}),
      steps: tracked.steps,
      outcome:
        tracked.outcome ??
        (tracked.steps.length === 0 && (tracked.change === undefined || tracked.change === "none")
          ? "unchanged"
          : "settled"),
      ...(tracked.message ? { message: tracked.message } : {}),
      ...(tracked.rollout ? { rollout: tracked.rollout } : {}),
    }));
    return { objects, ...summarized(objects) };
  }
}
