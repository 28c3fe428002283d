/** The pure reconcile step for a Cluster, on the generic step: what only the Cluster kind brings to it. */
import type { ClusterObservation, ClusterTarget } from "../../api/backend.ts";
import type { Cluster, ClusterStatus } from "../../api/cluster.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import type { JsonObject } from "../../api/common.ts";
import { CLUSTER_ANNOTATIONS, CLUSTER_FINALIZERS, CLUSTER_LABELS } from "../../api/constants/cluster.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../../api/constants/cluster-pool.ts";
import {
  HIBERNATE_ANNOTATION,
  HIBERNATION_CONDITION,
  HIBERNATION_REASONS,
} from "../../api/constants/hibernation.ts";
import { ANNOTATIONS, CONDITION_TYPES, LABELS, OPERATIONS, REASONS } from "../../api/constants.ts";
import { HANDOVER_ANNOTATION } from "../../api/move.ts";
import {
  type BackendOrder,
  backendClusterFacts,
  backendTarget,
  notServing,
} from "../backend-cluster/backend-cluster.ts";
import { poolMemberAnnotation } from "../cluster-pool/claim.ts";
import type { UnpublishedProfile } from "../cluster-profile/profile.ts";
import { type ProfileClaimant, profileReference } from "../cluster-profile/profile-reference.ts";
import { type KindStep, kindStep, type StepBasics, type Transitioned } from "../shared/kind-step.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import type { RequeueTiming } from "../shared/machine-tags.ts";
import {
  type ClusterFacts,
  clusterMachine,
  type HandoverFacts,
  type HibernationFacts,
  type PoolMemberFacts,
} from "./machine.ts";
import { desiredStatus, hibernationCondition } from "./status.ts";

/** Whether this provider acts on a Cluster at all, decided once, before anything else (and before any backend call). */
export type ClusterResponsibility =
  /** Annotated `openmcp.cloud/operation: ignore`: skip entirely. */
  | "ignored"
  /** Its profile belongs to another provider, or is missing and the Cluster is another's: no write at all. */
  | "foreign"
  /** Its profile does not exist (yet) but has our name's shape; ours to report on, nothing to build. */
  | "profileMissing"
  | "ours";

/**
 * Decides {@link ClusterResponsibility} by {@link profileReference}. A Cluster holding our finalizer stays
 * ours even if its profile went away, so what was built for it can still be removed.
 */
export function clusterResponsibility(
  cluster: Cluster,
  profile: ClusterProfile | undefined,
  claimant: ProfileClaimant,
): ClusterResponsibility {
  if (cluster.metadata.annotations?.[ANNOTATIONS.operation] === OPERATIONS.ignore) return "ignored";
  const reference = profileReference(
    { profileName: cluster.spec.profile, labels: cluster.metadata.labels },
    profile,
    claimant,
  );
  if (reference !== "missing") return reference;
  return cluster.metadata.finalizers?.includes(CLUSTER_FINALIZERS.cluster) ? "ours" : "profileMissing";
}

/** How often to look again: while the backend works (poll), while the profile is missing (retry), when Ready (resync). */
export type ClusterTiming = RequeueTiming;

/** Everything one step of a Cluster this provider is responsible for needs; all of it data. */
export interface ClusterStepInput extends StepBasics {
  readonly cluster: Cluster;
  readonly profile: ClusterProfile | undefined;
  readonly providerName: string;
  /** The backend's view; `{ exists: false }` when it was not asked (the profile is missing). */
  readonly observation: ClusterObservation;
  /** The version an unversioned Cluster gets (the ProviderConfig's defaultVersion); else the newest. */
  readonly defaultVersion?: string;
  readonly timing: ClusterTiming;
  /** While the profile is missing: the ProviderConfig of ours that would publish it, and why it does not. */
  readonly unpublished?: UnpublishedProfile;
  /** The hand-over Secret its hand-over annotation names, as the runtime found it; absent without the annotation. */
  readonly handover?: HandoverFacts;
  /** The warm pool's member that serves or may serve it (see {@link PoolMemberFacts}); absent: none. */
  readonly poolMember?: PoolMemberFacts;
  /** Its backend offers hibernate and wake (contract 1.6); absent: it does not. */
  readonly hibernationOffered?: boolean;
  /** Hash of the settings its backend target carries, recorded once it is ready with them. */
  readonly settingsHash?: string;
}

/**
 * What a Cluster's step orders besides the backend's create, update and delete: the take-over of a moved
 * Cluster's backend state (import from the hand-over Secret `secret`, then delete it), and the claim of a pool
 * member in its pool's status, which the backend then binds. Each is idempotent: ordered again, it finds done
 * what was done.
 */
export type ClusterCommand =
  | BackendOrder
  | { readonly kind: "hibernate" }
  | { readonly kind: "wake" }
  | { readonly kind: "takeOver"; readonly secret: string }
  | { readonly kind: "claimPoolMember"; readonly pool: string; readonly member: string };

/** What the hibernate annotation asks; absent when the Cluster has none. */
export function hibernationFacts(cluster: Cluster, offered: boolean): HibernationFacts | undefined {
  const value = cluster.metadata.annotations?.[HIBERNATE_ANNOTATION];
  if (value === undefined) return undefined;
  const asked = value.trim().toLowerCase();
  if (asked === "true") return { wanted: true, offered };
  if (asked === "false") return { wanted: false, offered };
  return { wanted: false, offered, invalid: value };
}

/** What the runtime does after a step: write `desired`, run the commands, record the Events. */
export type ClusterStepResult = KindStep<Cluster, ClusterStatus, ClusterCommand, ClusterFacts>;

/** The facts of the world, level-based: nothing here depends on what happened before. */
export function clusterFacts(input: ClusterStepInput): ClusterFacts {
  const hibernation = hibernationFacts(input.cluster, input.hibernationOffered === true);
  return {
    ...backendClusterFacts(
      input.cluster,
      CLUSTER_FINALIZERS.cluster,
      input.profile,
      input.defaultVersion,
      input.observation,
    ),
    ...(input.handover ? { handover: input.handover } : {}),
    ...(input.poolMember ? { poolMember: input.poolMember } : {}),
    ...(hibernation ? { hibernation } : {}),
  };
}

const stringParam = (params: Readonly<Record<string, unknown>> | undefined, name: string) =>
  typeof params?.[name] === "string" ? params[name] : undefined;
const versionOf = (params: Readonly<Record<string, unknown>> | undefined) => stringParam(params, "version");

/**
 * One step of a Cluster. Guarantees (besides the generic step's): the finalizer is added in the same
 * step that first orders the cluster, and removed only once the backend reports it gone; labels go on
 * with the finalizer, never on a Cluster on its way out or whose profile this provider cannot see.
 */
export const stepCluster: (input: ClusterStepInput) => ClusterStepResult = kindStep<{
  input: ClusterStepInput;
  object: Cluster;
  facts: ClusterFacts;
  command: ClusterCommand;
  status: ClusterStatus;
  derived: undefined;
}>({
  machine: clusterMachine,
  object: (input) => input.cluster,
  readState: (cluster) => {
    const state = cluster.status?.providerStatus?.state;
    return typeof state === "string" && state !== "" ? state : "pending";
  },
  facts: clusterFacts,
  finalizer: CLUSTER_FINALIZERS.cluster,
  actions: {
    createCluster: (params): BackendOrder | undefined => {
      const version = versionOf(params);
      return version === undefined ? undefined : { kind: "create", version };
    },
    updateCluster: (params): BackendOrder | undefined => {
      const version = versionOf(params);
      return version === undefined ? undefined : { kind: "update", version };
    },
    deleteCluster: (): BackendOrder => ({ kind: "delete" }),
    hibernateCluster: (): ClusterCommand => ({ kind: "hibernate" }),
    wakeCluster: (): ClusterCommand => ({ kind: "wake" }),
    takeOver: (params): ClusterCommand | undefined => {
      const secret = stringParam(params, "secret");
      return secret === undefined ? undefined : { kind: "takeOver", secret };
    },
    claimPoolMember: (params): ClusterCommand | undefined => {
      const pool = stringParam(params, "pool");
      const member = stringParam(params, "member");
      return pool === undefined || member === undefined
        ? undefined
        : { kind: "claimPoolMember", pool, member };
    },
  },
  metadata(draft, { input, facts, finalizer, commands }) {
    // The hand-over's Secret is gone (taken): its annotation goes too, ending the move (level-based, so a
    // take-over the engine died in the middle of ends the same way).
    if (facts.handover?.state === "gone") delete draft.annotations?.[HANDOVER_ANNOTATION];
    // Never label an object on its way out, nor one whose profile we cannot see (it may not be ours).
    if (finalizer === "remove" || facts.deleting || (!facts.profileFound && !facts.hasFinalizer)) return;
    draft.labels ??= {};
    draft.labels[LABELS.provider] = input.providerName;
    // The version label shows what runs, or what is being built: set with the create, it saves a write.
    const created = commands.find((command) => command.kind === "create");
    const version = input.observation.exists ? input.observation.version : created?.version;
    if (version !== undefined) draft.labels[CLUSTER_LABELS.k8sVersion] = version;
    if (input.observation.exists && input.observation.info !== undefined) {
      draft.annotations ??= {};
      draft.annotations[CLUSTER_ANNOTATIONS.providerInfo] = input.observation.info;
    }
    // A pool records our claim: the Cluster says which member it is (kept once the pool forgets the claim).
    if (facts.poolMember?.claimed) {
      draft.annotations ??= {};
      draft.annotations[CLUSTER_POOL_ANNOTATIONS.poolMember] = poolMemberAnnotation(
        facts.poolMember.pool,
        facts.poolMember.member,
      );
    }
  },
  status: desiredStatus,
  moreEvents: (transition) => [...readinessEvents(transition), ...hibernationRefusals(transition)],
  // Ready, but the backend reports it not serving: look again sooner than a resync, to see it come back.
  atRest: ({ input, facts, state }) =>
    state === "ready" && notServing(facts.backend) !== undefined ? lookAgainWhileDown(input) : undefined,
});

/**
 * How soon to look again at a Ready Cluster whose backend reports it not serving: at the poll rate while it went
 * down lately (a restart, a rollback, a wake: most are back within seconds, and a retry's wait would leave it shown
 * down that much longer), at the retry rate once it has been down that long (a cluster down for good costs a look
 * per retry, not per poll).
 */
function lookAgainWhileDown(input: ClusterStepInput): number {
  const ready = input.cluster.status?.conditions?.find((c) => c.type === CONDITION_TYPES.clusterReady);
  // Not yet shown down: this step shows it so, now.
  if (ready?.status !== "False" || ready.reason !== REASONS.BackendNotReady) return input.timing.pollMs;
  const downForMs = Date.parse(input.now) - Date.parse(ready.lastTransitionTime ?? "");
  return downForMs < input.timing.retryMs ? input.timing.pollMs : input.timing.retryMs;
}

/**
 * While the machine stays Ready: an Event when the backend reports the cluster not ready any more, and one when
 * it is ready again after that or after the backend could not be asked (the failed look told its own Event).
 */
function readinessEvents({
  input,
  facts,
  previousState,
  state,
}: Transitioned<ClusterStepInput, ClusterFacts, ClusterCommand>): EventRecord[] {
  if (previousState !== "ready" || state !== "ready" || !facts.backend.exists) return [];
  const was = input.cluster.status?.conditions?.find((c) => c.type === CONDITION_TYPES.clusterReady);
  const backend = facts.backend;
  const down = notServing(backend);
  if (down !== undefined) {
    return was?.status === "True"
      ? [
          {
            type: "Warning",
            reason: REASONS.BackendNotReady,
            message: `The backend reports the cluster ${down}`,
          },
        ]
      : [];
  }
  return was?.status === "False" &&
    (was.reason === REASONS.BackendNotReady || was.reason === REASONS.ObserveFailed)
    ? [
        {
          type: "Normal",
          reason: REASONS.Ready,
          message: `The cluster is ready again with Kubernetes ${backend.version}`,
        },
      ]
    : [];
}

/** A Warning Event when the hibernate annotation asks what cannot be done (once, when the condition first says so). */
function hibernationRefusals({
  input,
  facts,
  state,
}: Transitioned<ClusterStepInput, ClusterFacts, ClusterCommand>): EventRecord[] {
  const now = hibernationCondition(input, facts, state);
  if (now?.status !== "False") return [];
  if (
    now.reason !== HIBERNATION_REASONS.InvalidHibernationRequest &&
    now.reason !== HIBERNATION_REASONS.HibernationNotOffered
  )
    return [];
  const was = input.cluster.status?.conditions?.find((c) => c.type === HIBERNATION_CONDITION);
  return was?.reason === now.reason ? [] : [{ type: "Warning", reason: now.reason, message: now.message }];
}

/** The backend's key and description of a Cluster, with its labels and annotations (contract 1.1). */
export function clusterTarget(
  cluster: Cluster,
  profile: ClusterProfile | undefined,
  settings?: JsonObject,
): ClusterTarget {
  return {
    ...backendTarget(cluster, cluster.spec.tenancy, profile, settings),
    ...(cluster.metadata.labels ? { labels: cluster.metadata.labels } : {}),
    ...(cluster.metadata.annotations ? { annotations: cluster.metadata.annotations } : {}),
  };
}
