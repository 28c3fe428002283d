/**
 * The world of the engine as a Cluster API provider: a real API server with the engine's CRDs and Cluster API's
 * core manager, a namespace, the ProviderConfigs `sim` (simulated backend) and `local` (local backend in a temporary
 * folder), and one engine with `capi` on for each, every backend call recorded by the target's uid.
 * `const world = await startCapiProviderWorld({ … })` in `beforeAll`, `await world?.stop()` in `afterAll`.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, type CustomObjectsApi, type V1Secret } from "@kubernetes/client-node";
import type { ClusterTarget } from "../../src/api/backend.ts";
import type { ClusterBackend } from "../../src/api/backend-contract.ts";
import type { ObjectMeta } from "../../src/api/common.ts";
import { RESOURCES } from "../../src/api/constants.ts";
import type { ClusterEndpointObject } from "../../src/api/engine-cluster.ts";
import type { ControlPlane } from "../../src/controlplane/control-plane.ts";
import { type CapiManager, startCapiManager } from "../../src/dev/capi-manager.ts";
import { backendTarget } from "../../src/machines/backend-cluster/backend-cluster.ts";
import { createBackend as createLocalBackend } from "../../src/providers/local.ts";
import { SimulatedBackend, type SimulatedBackendOptions } from "../../src/providers/simulated.ts";
import { installCrds } from "../../src/runtime/api-server/install-crds.ts";
import { Engine } from "../../src/runtime/engine.ts";
import { buildingKindsTimed, capiServed, mergeKindSettings } from "../../src/runtime/kinds/registry.ts";
import { aBackendContext } from "./backend-context.ts";
import { aProviderConfig } from "./builders.ts";
import { startApiServerWith } from "./cluster-harness.ts";
import { type CustomResource, orAbsent, readCustomObject } from "./maybe-absent.ts";
import { engineRunArgs } from "./processes.ts";
import { type RecordedCall, recording } from "./world.ts";

/** How to build the world. */
export interface CapiProviderWorldOptions {
  /** Where the test's objects live. */
  readonly namespace: string;
  /** The engines' provider names are `<provider>-sim` and `<provider>-local`. */
  readonly provider: string;
  /** The simulated backend's delays. */
  readonly simulated: SimulatedBackendOptions;
  /** How soon the engines look again at an object nothing changed. */
  readonly resyncMs: number;
  /** Cluster API feature gates, e.g. `ClusterTopology`. */
  readonly featureGates?: readonly string[];
}

/** An object the engine builds at a backend: an EngineCluster or an EngineControlPlane. */
export interface Built {
  readonly metadata: ObjectMeta;
  readonly spec: { readonly profile: string };
}

/** What a test gets. */
export interface CapiProviderWorld {
  readonly controlPlane: ControlPlane;
  readonly capi: CapiManager;
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly namespace: string;
  /** A temporary folder of the test's own, removed with the world. */
  readonly folder: string;
  /** The local backend itself, to ask it directly (its calls are not recorded). */
  readonly local: ClusterBackend;
  /** The engines serving the ProviderConfigs `sim` and `local`. */
  readonly engines: { readonly sim: Engine; readonly local: Engine };
  /** The backend calls about the target `uid`, as `method` or `method version` (`create 1.34.2`); [] for none. */
  callsOf(uid: string | undefined): string[];
  /** While `line` is set, every admin kubeconfig the backends give carries it: new credentials to the engine. */
  rotateAdminKubeconfig(line: string | undefined): void;
  /**
   * For an engine run as a process of its own (the kill -9 tests), provider `<provider>-kill`: creates its own
   * ProviderConfig `kill-sim` (`sim` belongs to `<provider>-sim`) and resolves to the `openmcp-engine run` arguments
   * (`--capi`, the simulated backend taking 4 s to provision, no scheduling) and its state folder.
   */
  engineProcess(): Promise<{ readonly args: string[]; readonly state: string }>;
  /** The object `name` of the namespace, or undefined when it does not exist. */
  read<T>(resource: CustomResource, name: string): Promise<T | undefined>;
  readSecret(name: string): Promise<V1Secret | undefined>;
  readClusterEndpoint(name: string): Promise<ClusterEndpointObject | undefined>;
  /** JSON-patches the object `name` of the namespace. */
  patch(resource: CustomResource, name: string, body: unknown[]): Promise<unknown>;
  /** Deletes the object `name` of the namespace. */
  remove(resource: CustomResource, name: string): Promise<void>;
  /** The backend's target for `object` under the ProviderConfig `providerConfig`. */
  targetOf(object: Built | undefined, providerConfig: string): ClusterTarget;
  /** Stops the engines, the manager and the API server, and removes the folder. */
  stop(): Promise<void>;
}

/** Starts it all; on failure stops what it started. */
export async function startCapiProviderWorld(options: CapiProviderWorldOptions): Promise<CapiProviderWorld> {
  const { namespace, provider } = options;
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step();
  };
  try {
    const folder = await mkdtemp(join(tmpdir(), `${provider}-world-`));
    stops.push(() => rm(folder, { recursive: true, force: true }));
    const { controlPlane, custom } = await startApiServerWith(namespace);
    stops.push(() => controlPlane.stop());
    const capi = await startCapiManager({
      kubeConfig: controlPlane.kubeConfig,
      installCrds,
      ...(options.featureGates ? { featureGates: options.featureGates } : {}),
    });
    stops.push(() => capi.stop());
    const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);

    const calls: RecordedCall[] = [];
    let rotation: string | undefined;
    const startEngine = async (providerName: string, backend: ClusterBackend) => {
      const engine = new Engine({
        kubeConfig: controlPlane.kubeConfig,
        providerName,
        environment: "test",
        backend: rotatable(recording(backend, calls), () => rotation),
        kindSettings: mergeKindSettings(
          buildingKindsTimed({ pollMs: 300, retryMs: 2_000, resyncMs: options.resyncMs }),
          capiServed(true),
        ),
      });
      stops.push(() => engine.stop());
      await engine.start();
      return engine;
    };
    /** Creates the ProviderConfig `name` of `backend` for the engine of `providerName`. */
    const addProviderConfig = async (name: string, backend: string, providerName: string) => {
      await custom.createClusterCustomObject({
        ...RESOURCES.ProviderConfig,
        body: aProviderConfig({ name, backend, providerRef: { name: providerName } }),
      });
    };
    // Two providers on one API server: each config names the one it belongs to.
    await addProviderConfig("sim", "simulated", `${provider}-sim`);
    await addProviderConfig("local", "local", `${provider}-local`);
    const local = await createLocalBackend(aBackendContext(join(folder, "local"), { stopOnClose: "true" }));
    const engines = {
      sim: await startEngine(`${provider}-sim`, new SimulatedBackend(options.simulated)),
      local: await startEngine(`${provider}-local`, local),
    };

    return {
      controlPlane,
      capi,
      custom,
      core,
      namespace,
      folder,
      local,
      engines,
      callsOf: (uid) =>
        calls
          .filter((call) => call.uid !== undefined && call.uid === uid)
          .map((call) => (call.version ? `${call.method} ${call.version}` : call.method)),
      rotateAdminKubeconfig: (line) => {
        rotation = line;
      },
      engineProcess: async () => {
        const state = join(folder, "kill");
        const args = engineRunArgs(
          {
            provider: `${provider}-kill`,
            environment: "test",
            kubeconfig: controlPlane.kubeconfigPath,
            stateDir: state,
          },
          "--capi",
          "--backend-option=provisionDelay=4s",
          "--no-schedule",
        );
        await addProviderConfig("kill-sim", "simulated", `${provider}-kill`);
        return { args, state };
      },
      read: (resource, name) => readCustomObject(custom, resource, namespace, name),
      readSecret: (name) => orAbsent(core.readNamespacedSecret({ namespace, name })),
      readClusterEndpoint: (name) => readCustomObject(custom, RESOURCES.ClusterEndpoint, namespace, name),
      patch: (resource, name, body) =>
        custom.patchNamespacedCustomObject({ ...resource, namespace, name, body }),
      remove: async (resource, name) => {
        await custom.deleteNamespacedCustomObject({ ...resource, namespace, name });
      },
      // As the engine builds it (an EngineCluster's or EngineControlPlane's cluster is Exclusive).
      targetOf: (object, providerConfig) => ({
        ...backendTarget(
          object ?? { metadata: {}, spec: { profile: "" } },
          "Exclusive",
          undefined,
          undefined,
        ),
        providerConfig,
      }),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** `backend` whose admin kubeconfig, while `line()` says something, carries that line as a comment. */
function rotatable(backend: ClusterBackend, line: () => string | undefined): ClusterBackend {
  return new Proxy(backend, {
    get(target, property) {
      if (property !== "adminAccess") return Reflect.get(target, property);
      return async (...args: Parameters<ClusterBackend["adminAccess"]>) => {
        const access = await target.adminAccess(...args);
        const rotation = line();
        return access && rotation ? { kubeconfig: `${access.kubeconfig}\n# ${rotation}\n` } : access;
      };
    },
  });
}
