/**
 * The backend conformance kit: the ClusterBackend contract as an executable, model-based property test.
 * Call `checkBackendConformance(createBackend)` from any backend's test file; it throws with a shrunk,
 * readable sequence of calls when the backend breaks the contract.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import type { ClusterTarget } from "../api/backend.ts";
import {
  BACKEND_CONTRACT_VERSION,
  type BackendContext,
  type BackendFactory,
  type BackendModule,
  type ClusterBackend,
} from "../api/backend-contract.ts";
import { systemClock } from "../api/clock.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { JsonObject } from "../api/common.ts";
import { ENGINE_API_VERSION } from "../api/constants.ts";
import { contractCompatibility } from "../api/contract-version.ts";
import { silentLogger } from "../api/logger.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import {
  adminAccessCommand,
  awaitCreated,
  awaitReadyCommand,
  type Command,
  ConformanceError,
  callWithFaults,
  checkLiveCount,
  checkObservation,
  createCommand,
  deleteCommand,
  eventually,
  fail,
  faultsArb,
  hibernateCommand,
  hibernation,
  type Model,
  moveCommand,
  observeCommand,
  observeUntil,
  type Real,
  readyTimeoutMs,
  restartCommand,
  trustCommand,
  updateCommand,
  wakeCommand,
} from "./conformance-commands.ts";
import type { ConformanceOptions } from "./conformance-options.ts";

export { ConformanceError } from "./conformance-commands.ts";
export type { ConformanceOptions, ConformanceRun } from "./conformance-options.ts";

/** Cluster objects per run: enough for calls on one to disturb another, few enough to shrink well. */
const CLUSTER_COUNT = 3;

/**
 * The uid of cluster `index` in run `run` of one kit call: `<12 random hex digits of the call>` then run and index,
 * shaped as a version-4 UUID. Random per call, so what one call left on persistent infrastructure (a test that
 * was killed) never meets the next call's clusters.
 */
function conformanceUid(call: string, run: number, index: number): string {
  return `${call.slice(0, 8)}-${call.slice(8, 12)}-4000-8000-${String(run).padStart(6, "0")}${String(index).padStart(6, "0")}`;
}

/**
 * Checks the backends a factory makes (or a backend module: then its `contractVersion` first) against the ClusterBackend contract with random call sequences: create,
 * observe, update, delete, admin access and (where offered) OIDC trust, with duplicate calls, calls after a restart (a fresh
 * instance on the same state folder) and injected faults (a call lost before it reached the backend,
 * or whose reply was lost after it took effect). After each sequence, every cluster still wanted must
 * become ready with an endpoint, and once all are deleted nothing may be left. Where the backend gives admin
 * access, the kit uses it against the cluster and checks it may do what the backend declares (see
 * {@link ConformanceOptions.verifyAdminAccess}). The uids of the Cluster objects are random per call.
 */
export async function checkBackendConformance(
  backend: BackendFactory | BackendModule,
  options: ConformanceOptions = {},
): Promise<void> {
  const factory = typeof backend === "function" ? backend : backendModuleFactory(backend);
  let runs = 0;
  const index = fc.nat({ max: CLUSTER_COUNT - 1 });
  const commands = [
    fc
      .tuple(index, fc.nat({ max: 5 }), faultsArb, fc.boolean())
      .map(([i, v, f, t]) => createCommand(i, v, f, t, options)),
    index.map((i) => observeCommand(i)),
    index.map((i) => awaitReadyCommand(i, options)),
    fc.tuple(index, fc.nat({ max: 5 }), faultsArb).map(([i, v, f]) => updateCommand(i, v, f, options)),
    fc.tuple(index, faultsArb, fc.boolean()).map(([i, f, t]) => deleteCommand(i, f, t, options)),
    index.map((i) => adminAccessCommand(i, options)),
    index.map((i) => trustCommand(i)),
    fc.constant(restartCommand),
    fc.constant(moveCommand),
  ];
  // Hibernation (contract 1.6), for a backend that has it: the others are never asked.
  const sleeps = await offersHibernation(factory, options);
  if (sleeps)
    commands.push(
      fc.tuple(index, faultsArb, fc.boolean()).map(([i, f, t]) => hibernateCommand(i, f, t, options)),
      fc.tuple(index, faultsArb, fc.boolean()).map(([i, f, t]) => wakeCommand(i, f, t, options)),
    );
  // Every check starts with the plain life of one cluster, so the kit never passes without a create reaching the
  // backend, nor (where it is offered) without using admin access to a ready cluster.
  const plainLife: Command[] = [
    createCommand(0, 0, [], false, options),
    awaitReadyCommand(0, options),
    adminAccessCommand(0, options),
    deleteCommand(0, [], false, options),
  ];
  // And, for backends that hand clusters over, a ready cluster moved, then used and deleted by the new instance.
  const movedLife: Command[] = [
    createCommand(0, 0, [], false, options),
    awaitReadyCommand(0, options),
    moveCommand,
    observeCommand(0),
    adminAccessCommand(0, options),
    deleteCommand(0, [], false, options),
  ];
  // And, for backends that hibernate, a ready cluster put to sleep (twice), woken (twice: the admin kubeconfig from
  // before must work), put to sleep again and deleted from there. Random sequences add restarts and moves.
  const sleptLife: Command[] = [
    createCommand(0, 0, [], false, options),
    awaitReadyCommand(0, options),
    hibernateCommand(0, [], true, options),
    observeCommand(0),
    wakeCommand(0, [], true, options),
    adminAccessCommand(0, options),
    hibernateCommand(0, [], false, options),
    deleteCommand(0, [], false, options),
  ];
  const call = randomBytes(6).toString("hex");
  // Shrinking reports the last failure; the first one is shown too, since a run that failed can leave a cause behind.
  let firstFailure: string | undefined;

  const details = await fc.check(
    fc.asyncProperty(
      fc.commands(commands, {
        maxCommands: options.maxCommands ?? 10,
        ...(options.replayPath === undefined ? {} : { replayPath: options.replayPath }),
      }),
      async (sequence) => {
        const run = runs++;
        const stateDirectory = await mkdtemp(join(tmpdir(), "conformance-"));
        /** Every state folder of the run: a move leaves the old one to the old instance's clusters. */
        const folders = [stateDirectory];
        const context = conformanceContext(stateDirectory, options.context);
        let backend = await factory(context);
        const config = conformanceConfig(backend, options);
        const versions = await offeredVersions(backend, config);
        if (versions.length === 0)
          fail(
            "a config yields versions",
            `supportedVersions offers nothing for ${JSON.stringify(config.spec)}`,
          );
        const settings = options.settings ?? config.spec.settings;
        const real: Real = {
          backend,
          stateDirectory,
          run,
          versions,
          endpoints: new Map(),
          accessBeforeSleep: new Map(),
          restart: async () => {
            await backend.close?.();
            backend = await factory(conformanceContext(real.stateDirectory, options.context));
            real.backend = backend;
          },
          move: async (indexes) => {
            const from = real.backend;
            if (!from.exportCluster || !from.importCluster) return;
            const handed: Array<readonly [number, Readonly<Record<string, string>>]> = [];
            try {
              for (const i of indexes) handed.push([i, await from.exportCluster(real.target(i))]);
            } catch {
              return; // refused: move leaves every cluster where it was
            }
            const folder = await mkdtemp(join(tmpdir(), "conformance-"));
            folders.push(folder);
            await from.close?.();
            backend = await factory(conformanceContext(folder, options.context));
            real.backend = backend;
            real.stateDirectory = folder;
            for (const [i, state] of handed) {
              const importCluster = backend.importCluster;
              if (!importCluster)
                fail("hand-over", "an instance of the backend has exportCluster but no importCluster");
              await importCluster.call(backend, real.target(i), state);
            }
          },
          target: (i) =>
            conformanceTarget(config, settings, {
              uid: conformanceUid(call, run, i),
              name: `c${i}`,
              tenancy: "Shared",
            }),
        };
        const model: Model = { clusters: new Map() };
        try {
          await fc.asyncModelRun(() => ({ model, real }), sequence);
          await settle(model, real, options);
        } catch (error) {
          firstFailure ??= `${fc.stringify(sequence).replace(/\s*\/\*replayPath="[^"]*"\*\//, "")}: ${String((error as Error)?.message ?? error)}`;
          throw error;
        } finally {
          await cleanUp(real, options);
          await real.backend.close?.();
          for (const folder of folders) await rm(folder, { recursive: true, force: true });
        }
      },
    ),
    {
      numRuns: options.numRuns ?? 20,
      examples: [[plainLife], [movedLife], ...(sleeps ? [[sleptLife] as [Command[]]] : [])],
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(options.path === undefined ? {} : { path: options.path }),
    },
  );
  if (!details.failed) return;
  const cause = details.errorInstance;
  const rule =
    cause instanceof ConformanceError
      ? cause.message
      : `unexpected error: ${String((cause as Error)?.message ?? cause)}`;
  // fast-check prints the sequence with its own replay path in a comment; both paths are needed to replay.
  const printed = details.counterexample ? fc.stringify(details.counterexample[0]) : "(none)";
  const replayPath = /\/\*replayPath="([^"]*)"\*\//.exec(printed)?.[1];
  const sequence = printed.replace(/\s*\/\*replayPath="[^"]*"\*\//, "");
  const replay = `seed: ${details.seed}, path: "${details.counterexamplePath}"${replayPath ? `, replayPath: "${replayPath}"` : ""}`;
  const first = firstFailure && !firstFailure.endsWith(rule) ? `\n  first failure: ${firstFailure}` : "";
  throw new ConformanceError(
    `the backend breaks the contract — ${rule}\n  shortest call sequence found: ${sequence}\n  replay with { ${replay} } after ${details.numRuns} run(s)${first}`,
    { cause },
  );
}

/**
 * Whether the backend offers hibernation (contract 1.6): asked of one instance on a throwaway state folder, before
 * the runs, so the kit adds the hibernate and wake commands (and their example) only for a backend that has them.
 */
async function offersHibernation(factory: BackendFactory, options: ConformanceOptions): Promise<boolean> {
  const folder = await mkdtemp(join(tmpdir(), "conformance-probe-"));
  try {
    const backend = await factory(conformanceContext(folder, options.context));
    try {
      return hibernation(backend) !== undefined;
    } finally {
      await backend.close?.();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** A cluster the kit asks `config`'s backend about: of namespace and profile `conformance`, with `settings`. */
export function conformanceTarget(
  config: ProviderConfig,
  settings: JsonObject | undefined,
  cluster: Pick<ClusterTarget, "uid" | "name" | "tenancy">,
): ClusterTarget {
  return {
    uid: cluster.uid,
    namespace: "conformance",
    name: cluster.name,
    tenancy: cluster.tenancy,
    profile: "conformance",
    providerConfig: config.metadata.name ?? "conformance",
    ...(settings ? { settings } : {}),
  };
}

/** The config the kits serve: the one given, else one for this backend listing no versions, with `settings`. */
export function conformanceConfig(
  backend: ClusterBackend,
  options: { readonly config?: ProviderConfig; readonly settings?: JsonObject },
): ProviderConfig {
  return (
    options.config ?? {
      apiVersion: ENGINE_API_VERSION,
      kind: "ProviderConfig",
      metadata: { name: "conformance" },
      spec: { backend: backend.name, ...(options.settings ? { settings: options.settings } : {}) },
    }
  );
}

/** The versions `config` yields (through `readOffer` where the backend has it); a refused config fails with how to give one. */
export async function offeredVersions(
  backend: ClusterBackend,
  config: ProviderConfig,
): Promise<readonly SupportedVersion[]> {
  try {
    return backend.readOffer ? (await backend.readOffer(config)).versions : backend.supportedVersions(config);
  } catch (error) {
    return fail(
      "the config is served",
      `${backend.readOffer ? "readOffer" : "supportedVersions"} refused ProviderConfig ${JSON.stringify(config.spec)}: ${(error as Error).message} (give the kit the config or settings the backend needs: the options config or settings)`,
    );
  }
}

/** The factory of a backend module, once its `contractVersion` is one the engine would load. */
function backendModuleFactory(module: BackendModule): BackendFactory {
  const verdict = contractCompatibility(BACKEND_CONTRACT_VERSION, module.contractVersion);
  if (!verdict.compatible) fail("the engine loads the backend", verdict.why);
  const factory = module.createBackend ?? (module as { default?: unknown }).default;
  if (typeof factory !== "function")
    fail("the engine loads the backend", "the module exports no createBackend function");
  return factory as BackendFactory;
}

/** Every cluster still wanted becomes ready with an endpoint (a hibernated one stays asleep); then all go, and nothing is left. */
async function settle(model: Model, real: Real, options: ConformanceOptions): Promise<void> {
  for (const [i, cluster] of model.clusters) {
    if (cluster.status !== "created") continue;
    if (cluster.asleep) {
      // Asleep it stays, and is deleted from there below (contract 1.6: delete works from hibernated).
      checkObservation(real, model, i, await real.backend.observe(real.target(i)), `settle: observe(c${i})`);
      continue;
    }
    const ready = await awaitCreated(model, real, i, options, `c${i} eventually ready`);
    checkObservation(real, model, i, ready, `settle: observe(c${i})`);
  }
  for (const i of model.clusters.keys()) {
    await callWithFaults(`settle: delete(c${i})`, [], () => real.backend.delete(real.target(i)));
    await observeUntil(real, real.target(i), options, `c${i} eventually gone`, (o) => !o.exists);
    const cluster = model.clusters.get(i);
    if (cluster) cluster.status = "deleted";
  }
  const uids = Array.from({ length: CLUSTER_COUNT }, (_, i) => real.target(i).uid);
  const left = (await options.leftovers?.(real.stateDirectory, { uids })) ?? [];
  if (left.length > 0) fail("nothing is left behind", left.join("; "));
  await checkLiveCount(real, model, options, "deleting everything");
}

/**
 * After a failed run, best effort: remove what the run made so the next run starts clean. Delete is
 * idempotent, so it is asked again while waiting: a backend that made two clusters for one Cluster object
 * (the failure being reported) still ends with none, instead of the wait running out.
 */
async function cleanUp(real: Real, options: ConformanceOptions): Promise<void> {
  const indexes = Array.from({ length: CLUSTER_COUNT }, (_, i) => i);
  await Promise.all(
    indexes.map(async (i) => {
      try {
        await eventually(
          "clean-up",
          readyTimeoutMs(options),
          async () => {
            await real.backend.delete(real.target(i));
            return real.backend.observe(real.target(i));
          },
          (o) => !o.exists,
        );
      } catch {
        // reported by the run itself
      }
    }),
  );
}

/** The context the kits give a backend: a fresh state folder, no options, a silent log, the real clock. */
export function conformanceContext(
  stateDirectory: string,
  overrides?: Partial<Omit<BackendContext, "stateDirectory">>,
): BackendContext {
  return {
    options: {},
    log: silentLogger,
    clock: systemClock,
    readSecret: async () => undefined,
    ...overrides,
    stateDirectory,
  };
}
