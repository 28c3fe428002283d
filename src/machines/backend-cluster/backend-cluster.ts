/**
 * What every kind that holds a cluster at the backend (Cluster, EngineCluster, EngineControlPlane) shares by construction:
 * its facts, the guards over them, how its version is resolved, its failed and deleting states and its
 * backend target. A kind adds its own facts, guards and states.
 */
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject, ObjectMeta } from "../../api/common.ts";
import { REASONS } from "../../api/constants.ts";
import { identityUid } from "../../api/move.ts";
import { recordEvent } from "../shared/actions-as-data.ts";
import { type BackendRelease, backendRelease } from "../shared/backend-release.ts";
import type { ConditionUpdate } from "../shared/conditions.ts";
import { type DeletionFacts, deletionFacts, deletionPredicates } from "../shared/finalizer.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { REQUEUE } from "../shared/machine-tags.ts";
import { type ObservedEvent, whenObserved } from "../shared/observed-guard.ts";
import { resolveVersion, type VersionResolution } from "./kubernetes-version.ts";

/**
 * The facts of an object that holds a cluster at the backend, level-based (while our finalizer is on it, the
 * backend may hold a cluster for it).
 */
export interface BackendClusterFacts extends DeletionFacts {
  /** Finalizers of others, which deletion of the infrastructure waits for. */
  readonly foreignFinalizers: readonly string[];
  /** The ClusterProfile it names exists (and is ours; foreign ones never reach the machine). */
  readonly profileFound: boolean;
  /** The version to build, or why there is none; `undefined` while the profile is missing. */
  readonly version: VersionResolution | undefined;
  /** What the backend reports ("ready" only with a usable endpoint: ready always publishes one). */
  readonly backend: ClusterObservation;
}

/** An object that holds a cluster at the backend, as far as its facts go. */
export interface BackendClusterObject {
  readonly metadata: ObjectMeta;
  readonly spec: { readonly kubernetes?: { readonly version?: string } | undefined };
}

/** `https://host:port` → `{ host, port }`; undefined for anything that is not a URL with a host. */
export function apiEndpointOf(url: string | undefined): { host: string; port: number } | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    const port = parsed.port === "" ? (parsed.protocol === "http:" ? 80 : 443) : Number(parsed.port);
    const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
    return host === "" ? undefined : { host, port };
  } catch {
    return undefined;
  }
}

/**
 * The facts of `object`, which carries `finalizer` when it is ours. An empty or absent version asks for
 * `defaultVersion` (the ProviderConfig's), else the profile's newest; a version running at the backend
 * newer than the resolved one is a downgrade.
 */
export function backendClusterFacts(
  object: BackendClusterObject,
  finalizer: string,
  profile: ClusterProfile | undefined,
  defaultVersion: string | undefined,
  observation: ClusterObservation,
): BackendClusterFacts {
  const finalizers = object.metadata.finalizers ?? [];
  const running = observation.exists ? observation.version : undefined;
  return {
    ...deletionFacts(object.metadata, finalizer),
    foreignFinalizers: finalizers.filter((name) => name !== finalizer),
    profileFound: profile !== undefined,
    version: profile
      ? resolveVersion(
          object.spec.kubernetes?.version || defaultVersion, // "" (which the CRDs accept) is no version
          profile.spec.supportedVersions ?? [],
          running,
        )
      : undefined,
    backend:
      observation.exists && observation.phase === "ready" && apiEndpointOf(observation.endpoint) === undefined
        ? { ...observation, phase: "provisioning" }
        : observation,
  };
}

/** The version to build once the spec resolves; undefined while it does not. */
export const acceptedVersion = (facts: BackendClusterFacts): string | undefined =>
  facts.version?.kind === "accepted" ? facts.version.version : undefined;

const backendPhase = (facts: BackendClusterFacts) => (facts.backend.exists ? facts.backend.phase : undefined);

/**
 * Why a cluster that came up once no longer serves, as its backend reports it (e.g. its processes or machines
 * stopped); undefined while it serves (ready, or updating: a rolling upgrade keeps serving).
 */
export function notServing(backend: ClusterObservation): string | undefined {
  if (!backend.exists || backend.phase === "ready" || backend.phase === "updating") return undefined;
  return `${backend.phase}${backend.message ? `: ${backend.message}` : ""}`;
}

/**
 * The main condition (`type`) of an object whose cluster came up once and now does not serve, or whose backend
 * cannot be asked: False, `BackendNotReady` with the backend's words, or `ObserveFailed` with the failure.
 * `what` names what the backend holds ("the cluster", "the control plane").
 */
export function lostCondition(
  type: string,
  what: string,
  lost: { readonly notServing: string } | { readonly lookFailed: string },
): ConditionUpdate {
  return "notServing" in lost
    ? {
        type,
        status: "False",
        reason: REASONS.BackendNotReady,
        message: `the backend reports ${what} ${lost.notServing}`,
      }
    : {
        type,
        status: "False",
        reason: REASONS.ObserveFailed,
        message: `the backend could not be asked about ${what}: ${lost.lookFailed}`,
      };
}

/** What the backend says is missing of a cluster that exists but is not whole; never for one being deleted. */
export const incompleteness = (facts: BackendClusterFacts): string | undefined =>
  facts.backend.exists && facts.backend.phase !== "deleting" && !facts.deleting
    ? facts.backend.incomplete
    : undefined;

/** The predicates over those facts every such machine guards with, by the guard's name. */
export const backendClusterPredicates = {
  isBeingDeleted: deletionPredicates.isBeingDeleted,
  versionRejected: (facts: BackendClusterFacts) => facts.profileFound && facts.version?.kind !== "accepted",
  /** The profile exists and the requested version resolves: the cluster can be ordered. */
  specAcceptable: (facts: BackendClusterFacts) => facts.profileFound && facts.version?.kind === "accepted",
  backendAbsent: (facts: BackendClusterFacts) => !facts.backend.exists,
  /**
   * The backend has no cluster for it, or one that is not whole (`incomplete`, contract 1.2): `create` is
   * ordered (again), which makes what is missing.
   */
  backendNeedsCreate: (facts: BackendClusterFacts) =>
    incompleteness(facts) !== undefined || !facts.backend.exists,
  backendReady: (facts: BackendClusterFacts) => backendPhase(facts) === "ready",
  backendFailed: (facts: BackendClusterFacts) => backendPhase(facts) === "failed",
  /**
   * Ready at the backend, but on another version than the one resolved from the spec, or otherwise out of
   * date with what the object asks (the backend says so).
   */
  upgradeWanted: (facts: BackendClusterFacts) => {
    const wanted = acceptedVersion(facts);
    return (
      facts.backend.exists &&
      facts.backend.phase === "ready" &&
      wanted !== undefined &&
      (facts.backend.version !== wanted || facts.backend.outOfDate === true)
    );
  },
  /** Ready at the backend on exactly the wanted version, and up to date. */
  backendReadyAsWanted: (facts: BackendClusterFacts) =>
    facts.backend.exists &&
    facts.backend.phase === "ready" &&
    facts.backend.version === acceptedVersion(facts) &&
    facts.backend.outOfDate !== true,
  /** A failed cluster is retried once the spec resolves again and the backend no longer reports failure. */
  problemResolved: (facts: BackendClusterFacts) =>
    facts.profileFound && facts.version?.kind === "accepted" && backendPhase(facts) !== "failed",
  withoutOurFinalizer: deletionPredicates.withoutOurFinalizer,
  noForeignFinalizers: (facts: BackendClusterFacts) => facts.foreignFinalizers.length === 0,
  backendNotDeleting: (facts: BackendClusterFacts) =>
    facts.backend.exists && facts.backend.phase !== "deleting",
} as const;

type GuardName = keyof typeof backendClusterPredicates;

/** {@link backendClusterPredicates} as guards of a machine whose facts are `F`; a kind spreads them into its `setup`. */
export function backendClusterGuards<F extends BackendClusterFacts>(): {
  readonly [name in GuardName]: ReturnType<typeof whenObserved<F>>;
} {
  const when = whenObserved<F>;
  return Object.fromEntries(
    Object.entries(backendClusterPredicates).map(([name, predicate]) => [name, when(predicate)]),
  ) as { readonly [name in GuardName]: ReturnType<typeof whenObserved<F>> };
}

/** What the backend says about its cluster, as a condition message appends it: ` (backend: ready, …)`. */
export function backendDetail(backend: ClusterObservation): string {
  return backend.exists ? ` (backend: ${backend.phase}${backend.message ? `, ${backend.message}` : ""})` : "";
}

/** What a kind that holds a cluster at the backend orders it to do; the runtime knows the target. */
export type BackendOrder =
  | { readonly kind: "create"; readonly version: string }
  | { readonly kind: "update"; readonly version: string }
  | { readonly kind: "delete" };

/** The backend's key and description of an object that holds a cluster (a kind may add to it). */
export function backendTarget(
  object: { readonly metadata: ObjectMeta; readonly spec: { readonly profile: string } },
  tenancy: ClusterTarget["tenancy"],
  profile: ClusterProfile | undefined,
  settings: JsonObject | undefined,
): ClusterTarget {
  return {
    ...(settings ? { settings } : {}),
    // The first incarnation's uid after a move (see IDENTITY_ANNOTATION): the backend keeps its key.
    uid: identityUid(object.metadata),
    namespace: object.metadata.namespace ?? "",
    name: object.metadata.name ?? "",
    tenancy,
    profile: object.spec.profile,
    providerConfig: profile?.spec.providerConfigRef.name ?? "",
  };
}

/** The Warning Event of a cluster that failed: a refused version, or what the backend says. */
export function failureEvent(facts: BackendClusterFacts): EventRecord {
  return {
    type: "Warning",
    reason: facts.version?.kind === "downgrade" ? "DowngradeNotAllowed" : "Failed",
    message:
      facts.version && facts.version.kind !== "accepted"
        ? facts.version.message
        : facts.backend.exists
          ? (facts.backend.message ?? "the backend reports the cluster failed")
          : "the cluster failed",
  };
}

/** A way out of `failed` a kind adds to the shared ones, tried after deletion and before `problemResolved`. */
export interface FailedExit {
  readonly guard: string;
  readonly target: string;
}

/**
 * The `failed` state of every such machine: a person must act; back to pending once the problem is resolved.
 * `exits` are a kind's own ways out (e.g. the Cluster's repair by an update), tried before that. Looked at again
 * slowly (retry): a backend that retries by itself (the local one backs off and starts again) or infrastructure
 * that comes back resolves it with no change to the object, and nothing else would wake it.
 */
export function failedState<const Exits extends readonly FailedExit[] = readonly []>(
  description: string,
  tags: readonly string[],
  exits: Exits = [] as unknown as Exits,
) {
  return {
    description,
    tags: [REQUEUE.retry, ...tags],
    entry: [
      {
        type: "recordEvent",
        params: ({ event }: { event: ObservedEvent<BackendClusterFacts> }) => failureEvent(event.facts),
      },
    ],
    always: [
      { guard: "isBeingDeleted", target: "deleting" },
      ...exits,
      { guard: "problemResolved", target: "pending" },
    ],
  } as const;
}

/**
 * The `deleting` state of every such machine: it says so (`message`, naming what the kind holds), then
 * releases the cluster at the backend.
 */
export function deletingState<const Entry extends readonly string[]>(
  description: string,
  tags: readonly string[],
  release: BackendRelease<Entry>,
  message = "Deleting the cluster",
) {
  return {
    description,
    tags,
    entry: [recordEvent({ type: "Normal", reason: "Deleting", message })],
    ...backendRelease(release),
  } as const;
}
