/**
 * One world for an integration test: a real API server with our CRDs, a namespace and a ClusterProfile of
 * ours (the cluster harness), an engine on it driving the kinds asked for, a backend whose every call is
 * recorded, typed reads and `waitFor`. `const world = await startWorld({ backend, timing })` in `beforeAll`,
 * `await world.stop()` in `afterAll`.
 */
import { KubeConfig } from "@kubernetes/client-node";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import { findCapiAssets } from "../../src/dev/capi-assets.ts";
import type { RequeueTiming } from "../../src/machines/shared/machine-tags.ts";
import { SimulatedBackend } from "../../src/providers/simulated.ts";
import { installCrds } from "../../src/runtime/api-server/install-crds.ts";
import { Engine, type EngineOptions } from "../../src/runtime/engine.ts";
import { buildingKindsTimed, capiServed, mergeKindSettings } from "../../src/runtime/kinds/registry.ts";
import { type ClusterHarness, startClusterHarness } from "./cluster-harness.ts";

export { isReady } from "./cluster-harness.ts";

import { type EventuallyOptions, eventually, satisfying } from "./eventually.ts";
import { type CustomResource, readCustomObject } from "./maybe-absent.ts";

/** Fast requeues for tests: look again within a tenth of a second, retry a failure after a fifth. */
export const FAST_TIMING = { pollMs: 100, retryMs: 200, resyncMs: 60_000 } as const;

/** Engine options a test may set beyond the world's own. */
export type ExtraEngineOptions = Omit<
  Partial<EngineOptions>,
  "kubeConfig" | "providerName" | "environment" | "backend"
> & {
  /** A backend of the engine's own (recorded too); default: the world's. */
  readonly backend?: ClusterBackend;
};

/** How to build the world. */
export interface WorldOptions {
  /** The machine-backed kinds the engine drives (default: every registered kind). */
  readonly kinds?: EngineOptions["kinds"];
  /** The backend behind the recording (default: the simulated backend with no delays). */
  readonly backend?: ClusterBackend;
  /** Serve Cluster API too: its CRDs are installed and the engine runs with `capi`. */
  readonly capi?: boolean;
  /** The requeue timing of the kinds that build clusters (default {@link FAST_TIMING}). */
  readonly timing?: RequeueTiming;
  /** More options of the engine; `false` starts none (the test starts its own with `startEngine`). */
  readonly engine?: ExtraEngineOptions | false;
  /** `--provider-name` of the engine and the provider of the world's profile (default `engine-test`). */
  readonly provider?: string;
  /** More kube-apiserver flags, e.g. `--min-request-timeout=1` to end watches early. */
  readonly apiServerArgs?: readonly string[];
}

/** One backend call as the recording backend saw it. */
export interface RecordedCall {
  /** The ClusterBackend method, e.g. `create`. */
  readonly method: string;
  /** `<namespace>/<name>` of the cluster it is about; absent for calls about none (`traits`, …). */
  readonly cluster?: string;
  /** The uid of that cluster (a cluster deleted and made again under its name is another). */
  readonly uid?: string;
  /** The version asked for (`create`, `update`). */
  readonly version?: string;
}

/** A custom resource: its group, version and plural (`RESOURCES`, or a kind's own constant). */
type Resource = CustomResource;

/** What a test gets: the harness, the engine, the recorded backend and typed reads. */
export interface World extends ClusterHarness {
  /** The engine the world started (absent with `engine: false` until `startEngine`). */
  readonly engine: Engine;
  /** The backend the engines call: the one given, every call recorded in {@link calls}. */
  readonly backend: ClusterBackend;
  readonly calls: readonly RecordedCall[];
  /** Calls of `method` about `<namespace>/<name>`. */
  callsAbout(method: string, cluster: string): number;
  /** Starts one more engine on the world (its own KubeConfig, maybe its own backend), stopped with the world. */
  startEngine(options?: ExtraEngineOptions): Promise<Engine>;
  /** Creates the object `body` (in the world's namespace unless `namespace` is given); what the API server stored. */
  create<T>(resource: Resource, body: object, namespace?: string): Promise<T>;
  /** The object, or undefined when it does not exist. */
  read<T>(resource: Resource, name: string, namespace?: string): Promise<T | undefined>;
  /** Deletes the object (of the world's namespace unless `namespace` is given). */
  remove(resource: Resource, name: string, namespace?: string): Promise<void>;
  /** The objects of a namespace (or of the cluster, for cluster-scoped resources). */
  list<T>(resource: Resource, namespace?: string): Promise<T[]>;
  /** Waits until `predicate` holds for the object (or its absence); fails with the last object seen. */
  waitForObject<T>(
    resource: Resource,
    name: string,
    predicate: (object: T | undefined) => boolean,
    options?: { readonly namespace?: string } & Partial<EventuallyOptions>,
  ): Promise<T | undefined>;
}

/** Starts the API server, the harness's namespace and profile, and (unless told not to) the engine. */
export async function startWorld(options: WorldOptions = {}): Promise<World> {
  const harness = await startClusterHarness(options.provider, {
    ...(options.apiServerArgs ? { extraApiServerArgs: options.apiServerArgs } : {}),
  });
  if (options.capi)
    await installCrds(harness.controlPlane.kubeConfig, { directory: findCapiAssets().crdDirectory });
  const calls: RecordedCall[] = [];
  const backend = recording(options.backend ?? new SimulatedBackend({ provisionDelayMs: 0 }), calls);
  const engines: Engine[] = [];
  const startEngine = async (extra: ExtraEngineOptions = {}) => {
    // A KubeConfig of the engine's own: a client-side limit or interceptor then holds back only its requests.
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(harness.controlPlane.kubeconfigPath);
    const engine = new Engine({
      kubeConfig,
      providerName: harness.provider,
      environment: "test",
      backend,
      ...(options.kinds ? { kinds: options.kinds } : {}),
      ...extra,
      // The world's timing of the kinds that build clusters and its Cluster API side, under the test's own.
      kindSettings: mergeKindSettings(
        buildingKindsTimed(options.timing ?? FAST_TIMING),
        capiServed(options.capi === true),
        extra.kindSettings,
      ),
      // A backend of the engine's own is recorded too, into the same calls.
      ...(extra.backend ? { backend: recording(extra.backend, calls) } : {}),
    });
    engines.push(engine);
    await engine.start();
    return engine;
  };
  const first = options.engine === false ? undefined : await startEngine(options.engine);
  const read = <T>(resource: Resource, name: string, namespace = harness.namespace) =>
    readCustomObject<T>(harness.custom, resource, namespace, name);
  return {
    ...harness,
    get engine(): Engine {
      const engine = first ?? engines[0];
      if (!engine) throw new Error("this world started no engine (engine: false); call startEngine first");
      return engine;
    },
    backend,
    calls,
    callsAbout: (method, cluster) => calls.filter((c) => c.method === method && c.cluster === cluster).length,
    startEngine,
    create: async <T>(resource: Resource, body: object, namespace = harness.namespace) =>
      (await harness.custom.createNamespacedCustomObject({ ...resource, namespace, body })) as T,
    read,
    remove: async (resource, name, namespace = harness.namespace) => {
      await harness.custom.deleteNamespacedCustomObject({ ...resource, namespace, name });
    },
    list: async <T>(resource: Resource, namespace = harness.namespace) =>
      ((await harness.custom.listNamespacedCustomObject({ ...resource, namespace })) as { items: T[] }).items,
    waitForObject: <T>(
      resource: Resource,
      name: string,
      predicate: (object: T | undefined) => boolean,
      {
        namespace = harness.namespace,
        ...wait
      }: { readonly namespace?: string } & Partial<EventuallyOptions> = {},
    ) =>
      eventually(async () => satisfying(await read<T>(resource, name, namespace), predicate), {
        what: `${resource.plural} ${namespace}/${name}: ${predicate.name || String(predicate)}`,
        ...wait,
      }),
    stop: async () => {
      for (const engine of engines.splice(0)) await engine.stop();
      await harness.stop();
    },
  };
}

/** `backend` with every method call appended to `calls` (the same object underneath: its state stays one). */
export function recording(backend: ClusterBackend, calls: RecordedCall[]): ClusterBackend {
  return new Proxy(backend, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        const about = args[0] as Partial<ClusterTarget> | undefined;
        const cluster =
          typeof about === "object" && about !== null && typeof about.name === "string"
            ? `${about.namespace ?? ""}/${about.name}`
            : undefined;
        const uid = cluster && typeof about?.uid === "string" ? about.uid : undefined;
        const version = typeof args[1] === "string" ? args[1] : undefined;
        calls.push({
          method: property,
          ...(cluster ? { cluster } : {}),
          ...(uid ? { uid } : {}),
          ...(version ? { version } : {}),
        });
        return value.apply(target, args);
      };
    },
  });
}
