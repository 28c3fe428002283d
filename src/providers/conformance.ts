/**
 * The backend conformance kit: the ClusterBackend contract as an executable, model-based property test.
 * Call `checkBackendConformance(createBackend)` from any backend's test file; it throws with a shrunk,
 * readable sequence of calls when the backend breaks the contract.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import {
  type AdminAccess,
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
import { adminAccessProblem } from "./conformance-access.ts";

/** How hard to test. Defaults suit a fast backend; slow ones lower `numRuns`/`maxCommands` and raise `readyTimeoutMs`. */
export interface ConformanceOptions {
  /** Random call sequences to try (default 20). */
  readonly numRuns?: number;
  /** Calls per sequence at most (default 10). */
  readonly maxCommands?: number;
  /** How long "eventually ready" and "eventually gone" may take (default 10 s). */
  readonly readyTimeoutMs?: number;
  /**
   * The ProviderConfig the clusters come from, as `supportedVersions`, `traits` and `readOffer` are given it
   * (default: one for this backend listing no versions, whose `spec.settings` are `settings`).
   */
  readonly config?: ProviderConfig;
  /** `spec.settings` given with every target and, when `config` is not given, in the default config (default: the config's). */
  readonly settings?: JsonObject;
  /**
   * Whether the kit proves that admin access works (default true), for a backend whose `capabilities.adminAccess`
   * is true: it uses the returned kubeconfig against the cluster (a SelfSubjectReview, then SelfSubjectAccessReviews)
   * and fails unless it authenticates and may do what the backend declares — cluster-admin, or admin of each of
   * `scope.namespaces`. Give `false` only for a backend whose clusters are stand-ins, not API servers (a
   * simulation): the kit then checks only that the kubeconfig names the observed endpoint.
   */
  readonly verifyAdminAccess?: boolean;
  /** Overrides of the factory's context (options, readSecret, …); the kit supplies the state folder. */
  readonly context?: Partial<Omit<BackendContext, "stateDirectory">>;
  /**
   * Lists what a backend left behind after everything was deleted (processes, folders); must be empty. `run.uids`
   * are the uids of this run's clusters, so shared infrastructure can be searched for this run's things only: a
   * failed run's remains must not make the next runs fail in its place.
   */
  readonly leftovers?: (stateDirectory: string, run: ConformanceRun) => Promise<string[]>;
  /** Clusters the backend holds right now, if it can tell; never more than the Cluster objects that exist. */
  readonly liveClusters?: (backend: ClusterBackend) => Promise<number> | number;
  /** Seed and path, to replay a failure (both are printed with it). */
  readonly seed?: number;
  readonly path?: string;
  /** The call sequence's own replay path (fast-check's `replayPath`), printed with a failure beside the path. */
  readonly replayPath?: string;
}

/** One run of the kit, as `leftovers` sees it. */
export interface ConformanceRun {
  /** The uids of the run's cluster targets, index by index. */
  readonly uids: readonly string[];
}

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

/** A fault the kit injects around one command call, as the engine sees failures. */
type Fault = "none" | "before" | "after";

interface ModelCluster {
  status: "created" | "deleted";
  version: string;
  /** Reported ready once: from then on it exists until deleted (before, absent means "create it again"). */
  readySeen?: boolean;
  /** Reported `hibernated` after a hibernate (contract 1.6): it sleeps until a wake. */
  asleep?: boolean;
  /** Woken from a sleep once: an endpoint that changes then breaks "wake keeps the endpoint". */
  woken?: boolean;
}

/** What the kit believes: which of the run's Cluster objects exist, as the engine would know it. */
interface Model {
  readonly clusters: Map<number, ModelCluster>;
}

/** The system under test: the current backend instance (replaced on restart) and what it reported. */
interface Real {
  backend: ClusterBackend;
  /** The current instance's state folder (a move gives the next instance a new one). */
  stateDirectory: string;
  readonly run: number;
  readonly versions: readonly SupportedVersion[];
  readonly endpoints: Map<number, string>;
  /** The admin access obtained just before each cluster's last hibernate (contract 1.6), to be used after the wake. */
  readonly accessBeforeSleep: Map<number, AdminAccess>;
  readonly restart: () => Promise<void>;
  /** Hands the clusters `indexes` over to a fresh instance on a new state folder (contract 1.5). */
  readonly move: (indexes: readonly number[]) => Promise<void>;
  readonly target: (index: number) => ClusterTarget;
}

/** The contract was broken; the message says which rule, for which call. */
export class ConformanceError extends Error {
  override readonly name = "ConformanceError";
}

function fail(rule: string, detail: string): never {
  throw new ConformanceError(`${rule}: ${detail}`);
}

/** Runs a command as the engine would: after a failure, call again until it succeeds. */
async function callWithFaults(
  label: string,
  faults: readonly Fault[],
  call: () => Promise<void>,
): Promise<void> {
  for (const fault of faults) {
    if (fault === "before") continue; // the call never reached the backend; the engine retries
    if (fault === "after") {
      await call(); // the backend did it, but the reply was lost; the engine retries
    }
  }
  try {
    await call();
  } catch (error) {
    fail("commands succeed when they can", `${label} threw: ${(error as Error).message}`);
  }
}

/** {@link callWithFaults}, then, for a command called twice (a duplicate the engine may send), once more. */
async function callTwice(
  label: string,
  faults: readonly Fault[],
  twice: boolean,
  call: () => Promise<void>,
): Promise<void> {
  await callWithFaults(label, faults, call);
  if (twice) await callWithFaults(`${label} (again)`, [], call);
}

/** A command's label: `name(c<index>, <more>, faults=[…], twice)`. */
const commandLabel = (name: string, index: number, faults: readonly Fault[], twice: boolean, more = "") =>
  `${name}(c${index}${more}${describeFaults(faults)}${twice ? ", twice" : ""})`;

/** A command on cluster `index` that the engine may repeat: after the `faults`, and (`twice`) once more. */
type RepeatableCommand = (
  index: number,
  faults: readonly Fault[],
  twice: boolean,
  options: ConformanceOptions,
) => Command;

/** The run's patience with a backend: how long a cluster may take to become ready or go. */
const readyTimeoutMs = (options: ConformanceOptions) => options.readyTimeoutMs ?? 10_000;

async function eventually(
  label: string,
  timeoutMs: number,
  probe: () => Promise<ClusterObservation>,
  until: (o: ClusterObservation) => boolean,
): Promise<ClusterObservation> {
  const deadline = Date.now() + timeoutMs;
  let last: ClusterObservation;
  for (;;) {
    last = await probe();
    if (until(last)) return last;
    if (Date.now() > deadline)
      fail("eventually", `${label} not reached after ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
    await sleep(Math.min(250, Math.max(10, timeoutMs / 100)));
  }
}

/** Observes `target` until `until` holds, within the run's ready timeout. */
const observeUntil = (
  real: Real,
  target: ClusterTarget,
  options: ConformanceOptions,
  label: string,
  until: (o: ClusterObservation) => boolean,
) => eventually(label, readyTimeoutMs(options), () => real.backend.observe(target), until);

/** Ready with an endpoint, and whole (a cluster reported `incomplete` is still being repaired). */
const isReady = (o: ClusterObservation) =>
  o.exists && o.phase === "ready" && Boolean(o.endpoint) && !o.incomplete;

/**
 * Observes created cluster `index` until `until` holds, as the engine waits for it: a cluster not yet ready
 * that the backend reports absent (a create that failed and is to be tried again, e.g. kind's after its
 * backoff) is ordered again, at the model's version, as the engine's `provisioning` state does.
 */
async function awaitCreated(
  model: Model,
  real: Real,
  index: number,
  options: ConformanceOptions,
  label: string,
  until: (o: ClusterObservation) => boolean = isReady,
): Promise<ClusterObservation> {
  const cluster = model.clusters.get(index);
  const target = real.target(index);
  const reached = await eventually(
    label,
    readyTimeoutMs(options),
    async () => {
      const observation = await real.backend.observe(target);
      checkObservation(real, model, index, observation, label);
      if (!observation.exists && cluster?.status === "created") {
        await callWithFaults(`${label} (ordered again: reported absent)`, [], () =>
          real.backend.create(target, cluster.version),
        );
      }
      return observation;
    },
    until,
  );
  return reached;
}

function checkObservation(
  real: Real,
  model: Model,
  index: number,
  observation: ClusterObservation,
  label: string,
): void {
  const cluster = model.clusters.get(index);
  if (!cluster && observation.exists)
    fail("observe reports only what was created", `${label}: ${JSON.stringify(observation)}`);
  if (!observation.exists) {
    if (cluster?.status === "created" && cluster.readySeen)
      fail("a cluster once ready exists until deleted", `${label} reports it absent`);
    return;
  }
  if (cluster?.status === "created" && isReady(observation)) cluster.readySeen = true;
  if (cluster?.status === "created" && cluster.asleep && observation.phase !== "hibernated")
    fail(
      "a hibernated cluster sleeps until woken",
      `${label} reports ${observation.phase} (create, restart and move leave it asleep)`,
    );
  if (observation.incomplete !== undefined && observation.phase === "deleting")
    fail("a cluster being deleted is never incomplete", `${label}: ${JSON.stringify(observation)}`);
  if (!real.versions.some((v) => v.version === observation.version)) {
    fail(
      "versions reported are supported",
      `${label} reports ${observation.version}; supported: ${real.versions.map((v) => v.version).join(", ")}`,
    );
  }
  if (observation.endpoint) {
    const known = real.endpoints.get(index);
    if (known && known !== observation.endpoint && cluster?.status === "created") {
      fail(
        cluster.woken ? "wake keeps the endpoint" : "one cluster per Cluster object",
        `${label}: endpoint changed from ${known} to ${observation.endpoint}`,
      );
    }
    real.endpoints.set(index, observation.endpoint);
  }
  if (/BEGIN [A-Z ]*(KEY|CERTIFICATE)|client-key-data|token:/.test(JSON.stringify(observation))) {
    fail("no secret in an observation", `${label} carries credentials`);
  }
}

async function checkLiveCount(
  real: Real,
  model: Model,
  options: ConformanceOptions,
  label: string,
): Promise<void> {
  if (!options.liveClusters) return;
  const live = await options.liveClusters(real.backend);
  const allowed = [...model.clusters.values()].filter((c) => c.status === "created").length;
  if (live > allowed)
    fail(
      "one cluster per Cluster object",
      `after ${label} the backend holds ${live}, expected at most ${allowed}`,
    );
}

const faultsArb = fc.array(fc.constantFrom<Fault>("none", "before", "after"), { maxLength: 2 });
const describeFaults = (faults: readonly Fault[]) =>
  faults.some((f) => f !== "none") ? `, faults=[${faults.join(",")}]` : "";

type Command = fc.AsyncCommand<Model, Real>;

/** A command on cluster `c<index>`, shown as `label`; `check` says when the model allows it (default: always). */
function clusterCommand(
  index: number,
  label: string,
  run: (model: Model, real: Real, target: ClusterTarget) => Promise<void>,
  check: (model: Readonly<Model>) => boolean = () => true,
): Command {
  return { check, run: (model, real) => run(model, real, real.target(index)), toString: () => label };
}

const versionAt = (real: Real, versionIndex: number) =>
  (real.versions[versionIndex % real.versions.length] as SupportedVersion).version;

const createCommand = (
  index: number,
  versionIndex: number,
  faults: readonly Fault[],
  twice: boolean,
  options: ConformanceOptions,
): Command => {
  const label = commandLabel("create", index, faults, twice, `, v#${versionIndex}`);
  return clusterCommand(
    index,
    label,
    async (model, real, target) => {
      const version = versionAt(real, versionIndex);
      await callTwice(label, faults, twice, () => real.backend.create(target, version));
      if (!model.clusters.has(index)) model.clusters.set(index, { status: "created", version });
      const observation = await real.backend.observe(target);
      if (!observation.exists) fail("create is visible at once", `${label}: observe says absent`);
      checkObservation(real, model, index, observation, label);
      await checkLiveCount(real, model, options, label);
    },
    (model) => model.clusters.get(index)?.status !== "deleted",
  );
};

const observeCommand = (index: number): Command => {
  const label = `observe(c${index})`;
  return clusterCommand(index, label, async (model, real, target) => {
    const first = await real.backend.observe(target);
    const second = await real.backend.observe(target);
    checkObservation(real, model, index, first, label);
    checkObservation(real, model, index, second, label);
    if (!first.exists && second.exists)
      fail("observe changes nothing", `${label}: a second look found a cluster`);
  });
};

const isCreated = (index: number) => (model: Readonly<Model>) =>
  model.clusters.get(index)?.status === "created";

/** Created and awake: the model expects it to become ready (a hibernated one sleeps until woken). */
const isAwake = (index: number) => (model: Readonly<Model>) =>
  isCreated(index)(model) && model.clusters.get(index)?.asleep !== true;

const awaitReadyCommand = (index: number, options: ConformanceOptions): Command => {
  const label = `awaitReady(c${index})`;
  return clusterCommand(
    index,
    label,
    async (model, real) => {
      const ready = await awaitCreated(model, real, index, options, label);
      checkObservation(real, model, index, ready, label);
    },
    isAwake(index),
  );
};

/** The backend's hibernation pair (contract 1.6), or undefined when it has neither; one without the other fails. */
function hibernation(backend: ClusterBackend) {
  const { hibernate, wake } = backend;
  if (!hibernate && !wake) return undefined;
  if (!hibernate || !wake)
    fail(
      "hibernation is a pair",
      `the backend has ${hibernate ? "hibernate but no wake" : "wake but no hibernate"}`,
    );
  return {
    hibernate: (target: ClusterTarget) => hibernate.call(backend, target),
    wake: (target: ClusterTarget) => wake.call(backend, target),
  };
}

/** What a hibernation command acts on: the backend's pair, the model's cluster, and where it runs. */
interface SleepCall {
  readonly label: string;
  readonly pair: NonNullable<ReturnType<typeof hibernation>>;
  readonly cluster: ModelCluster;
  readonly model: Model;
  readonly real: Real;
  readonly target: ClusterTarget;
}

/** A hibernation command on a created cluster (contract 1.6): asked only of a backend that has the pair. */
function sleepCommand(
  name: "hibernate" | "wake",
  index: number,
  faults: readonly Fault[],
  twice: boolean,
  run: (call: SleepCall) => Promise<void>,
): Command {
  const label = commandLabel(name, index, faults, twice);
  return clusterCommand(
    index,
    label,
    async (model, real, target) => {
      const pair = hibernation(real.backend);
      const cluster = model.clusters.get(index);
      if (pair && cluster) await run({ label, pair, cluster, model, real, target });
    },
    isCreated(index),
  );
}

/**
 * Hibernate (contract 1.6; not asked of a backend without it): a ready cluster (or one asleep already: idempotent)
 * is put to sleep and must eventually report `hibernated`, and stay so until woken. Where the backend gives admin
 * access, the kubeconfig it gives just before is kept, for the wake to prove it still works.
 */
const hibernateCommand: RepeatableCommand = (index, faults, twice, options) =>
  sleepCommand("hibernate", index, faults, twice, async ({ label, pair, cluster, model, real, target }) => {
    if (!cluster.asleep) {
      await awaitCreated(model, real, index, options, `${label} precondition ready`);
      if (real.backend.capabilities.adminAccess) {
        const access = await real.backend.adminAccess(target);
        if (access) real.accessBeforeSleep.set(index, access);
      }
    }
    await callTwice(label, faults, twice, () => pair.hibernate(target));
    const asleep = await observeUntil(
      real,
      target,
      options,
      `${label} hibernated`,
      (o) => !o.exists || o.phase === "hibernated",
    );
    if (!asleep.exists) fail("a cluster once ready exists until deleted", `${label} reports it absent`);
    cluster.asleep = true;
    checkObservation(real, model, index, asleep, label);
  });

/**
 * Wake (contract 1.6): a hibernated cluster must become ready again at the endpoint it had before, and the admin
 * kubeconfig obtained before the sleep must still work (where the kit verifies admin access). Waking one that is
 * awake changes nothing.
 */
const wakeCommand: RepeatableCommand = (index, faults, twice, options) =>
  sleepCommand("wake", index, faults, twice, async ({ label, pair, cluster, model, real, target }) => {
    const slept = cluster.asleep === true;
    if (!slept) await awaitCreated(model, real, index, options, `${label} precondition ready`);
    const before = real.endpoints.get(index);
    await callTwice(label, faults, twice, () => pair.wake(target));
    cluster.asleep = false;
    if (slept) cluster.woken = true;
    const ready = await awaitCreated(model, real, index, options, `${label} ready`);
    checkObservation(real, model, index, ready, label);
    if (ready.exists && before !== undefined && ready.endpoint !== before)
      fail("wake keeps the endpoint", `${label}: endpoint changed from ${before} to ${ready.endpoint}`);
    const access = real.accessBeforeSleep.get(index);
    if (!slept || !access) return;
    real.accessBeforeSleep.delete(index);
    if (ready.exists && ready.endpoint && !access.kubeconfig.includes(ready.endpoint))
      fail(
        "kubeconfigs given before the sleep work after the wake",
        `${label}: the kubeconfig obtained before the hibernate does not name ${ready.endpoint}`,
      );
    if (options.verifyAdminAccess === false) return;
    const problem = await adminAccessProblem(access, readyTimeoutMs(options));
    if (problem)
      fail(
        "kubeconfigs given before the sleep work after the wake",
        `${label}: the admin kubeconfig obtained before the hibernate: ${problem}`,
      );
  });

const updateCommand = (
  index: number,
  versionIndex: number,
  faults: readonly Fault[],
  options: ConformanceOptions,
): Command => {
  const label = `update(c${index}, v#${versionIndex}${describeFaults(faults)})`;
  return clusterCommand(
    index,
    label,
    async (model, real, target) => {
      const ready = await awaitCreated(model, real, index, options, `${label} precondition ready`);
      const version = versionAt(real, versionIndex);
      if (ready.exists && ready.version === version) {
        await callWithFaults(label, faults, () => real.backend.update(target, version)); // a no-op that must succeed
        return;
      }
      try {
        await real.backend.update(target, version);
      } catch {
        return; // a backend may refuse to change versions; it must say so by throwing, which it did
      }
      await callWithFaults(label, faults, () => real.backend.update(target, version));
      const cluster = model.clusters.get(index);
      if (cluster) cluster.version = version;
      const updated = await awaitCreated(
        model,
        real,
        index,
        options,
        `${label} ready at ${version}`,
        (o) => isReady(o) && o.exists && o.version === version,
      );
      checkObservation(real, model, index, updated, label);
    },
    isAwake(index),
  );
};

const deleteCommand: RepeatableCommand = (index, faults, twice, options) => {
  const label = commandLabel("delete", index, faults, twice);
  return clusterCommand(index, label, async (model, real, target) => {
    await callTwice(label, faults, twice, () => real.backend.delete(target));
    const cluster = model.clusters.get(index);
    if (cluster) {
      cluster.status = "deleted";
      cluster.asleep = false;
    }
    await observeUntil(real, target, options, `${label} gone`, (o) => !o.exists);
    real.endpoints.delete(index);
    await checkLiveCount(real, model, options, label);
  });
};

const adminAccessCommand = (index: number, options: ConformanceOptions): Command => {
  const label = `adminAccess(c${index})`;
  return clusterCommand(index, label, async (_model, real, target) => {
    const observation = await real.backend.observe(target);
    const access = await real.backend.adminAccess(target);
    if (!real.backend.capabilities.adminAccess) {
      if (access !== undefined)
        fail(
          "admin access only when offered",
          `${label} returned access though capabilities.adminAccess is false`,
        );
      return;
    }
    if (!observation.exists && access !== undefined) fail("admin access only to clusters that exist", label);
    if (isReady(observation) && observation.exists) {
      if (!access) fail("admin access to ready clusters", `${label} returned nothing for a ready cluster`);
      if (!access.kubeconfig.includes(observation.endpoint ?? "\0")) {
        fail(
          "admin access points at the cluster",
          `${label}: the kubeconfig does not name ${observation.endpoint}`,
        );
      }
      if (options.verifyAdminAccess === false) return;
      const problem = await adminAccessProblem(access, readyTimeoutMs(options));
      if (problem) {
        fail(
          "admin access works",
          `${label}: ${problem} (a backend whose clusters are stand-ins, not API servers, gives the kit verifyAdminAccess: false)`,
        );
      }
    }
  });
};

/** An issuer a cluster is asked to trust (never contacted: trust is configuration). */
const CONFORMANCE_ISSUER = {
  issuer: "https://issuer.conformance.invalid",
  audiences: ["conformance"],
  usernameClaim: "sub",
  usernamePrefix: "conformance:",
  groupsClaim: "groups",
  groupsPrefix: "conformance:",
} as const;

const trustCommand = (index: number): Command =>
  clusterCommand(index, `trustOidcIssuers(c${index})`, async (_model, real, target) => {
    const trust = real.backend.trustOidcIssuers;
    if (!real.backend.capabilities.oidc) return;
    if (!trust) fail("OIDC trust when offered", "capabilities.oidc is true but trustOidcIssuers is missing");
    if (!isReady(await real.backend.observe(target))) return;
    // Declarative and idempotent: the same set twice, then none, all succeed.
    await trust.call(real.backend, target, [CONFORMANCE_ISSUER]);
    await trust.call(real.backend, target, [CONFORMANCE_ISSUER]);
    await trust.call(real.backend, target, []);
  });

const restartCommand: Command = {
  check: () => true,
  run: (_model, real) => real.restart(),
  toString: () => "restart()",
};

/**
 * A move (contract 1.5, for backends with `exportCluster` and `importCluster`): every cluster the model knows is
 * handed over to a fresh instance on a new, empty state folder, as `openmcp-engine move` hands them to the engine of
 * another management cluster; an export refused (a create still under way) leaves them all where they were, as
 * `move` does. Afterwards the new instance must serve them as the old one did: observe, update, admin access, delete.
 */
const moveCommand: Command = {
  check: () => true,
  run: (model, real) => real.move([...model.clusters.keys()]),
  toString: () => "move()",
};

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
          target: (i) => ({
            uid: conformanceUid(call, run, i),
            namespace: "conformance",
            name: `c${i}`,
            tenancy: "Shared",
            profile: "conformance",
            providerConfig: config.metadata.name ?? "conformance",
            ...(settings ? { settings } : {}),
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
