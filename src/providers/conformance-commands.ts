/**
 * The conformance kit's model and commands: what the kit believes of each Cluster object, the backend as it is,
 * and each call the random sequences make (create, observe, update, delete, admin access, OIDC trust, hibernate,
 * wake, restart, move), with the faults injected around it and the rule each checks.
 */
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import type { ClusterObservation, ClusterTarget } from "../api/backend.ts";
import type { AdminAccess, ClusterBackend } from "../api/backend-contract.ts";
import type { SupportedVersion } from "../api/cluster-profile.ts";
import { adminAccessProblem } from "./conformance-access.ts";
import type { ConformanceOptions } from "./conformance-options.ts";

/** A fault the kit injects around one command call, as the engine sees failures. */
export type Fault = "none" | "before" | "after";

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
export interface Model {
  readonly clusters: Map<number, ModelCluster>;
}

/** The system under test: the current backend instance (replaced on restart) and what it reported. */
export interface Real {
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

export function fail(rule: string, detail: string): never {
  throw new ConformanceError(`${rule}: ${detail}`);
}

/** Runs a command as the engine would: after a failure, call again until it succeeds. */
export async function callWithFaults(
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
export const readyTimeoutMs = (options: ConformanceOptions) => options.readyTimeoutMs ?? 10_000;

export async function eventually(
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
export const observeUntil = (
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
export async function awaitCreated(
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

export function checkObservation(
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

export async function checkLiveCount(
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

export const faultsArb = fc.array(fc.constantFrom<Fault>("none", "before", "after"), { maxLength: 2 });
const describeFaults = (faults: readonly Fault[]) =>
  faults.some((f) => f !== "none") ? `, faults=[${faults.join(",")}]` : "";

export type Command = fc.AsyncCommand<Model, Real>;

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

export const createCommand = (
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

export const observeCommand = (index: number): Command => {
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

export const awaitReadyCommand = (index: number, options: ConformanceOptions): Command => {
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
export function hibernation(backend: ClusterBackend) {
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
export const hibernateCommand: RepeatableCommand = (index, faults, twice, options) =>
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
export const wakeCommand: RepeatableCommand = (index, faults, twice, options) =>
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

export const updateCommand = (
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

export const deleteCommand: RepeatableCommand = (index, faults, twice, options) => {
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

export const adminAccessCommand = (index: number, options: ConformanceOptions): Command => {
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

export const trustCommand = (index: number): Command =>
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

export const restartCommand: Command = {
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
export const moveCommand: Command = {
  check: () => true,
  run: (model, real) => real.move([...model.clusters.keys()]),
  toString: () => "move()",
};
