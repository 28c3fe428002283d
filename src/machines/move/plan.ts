/**
 * What a move between management clusters (`openmcp-engine move`) copies and how, decided without I/O: which objects of the source belong to the
 * move, in which order their kinds go, and what each copy on the target looks like (its uid references
 * re-pointed to the target's uids, what the API server owns dropped).
 */

import type { ObjectMeta } from "../../api/common.ts";
import { ACCESS_REQUEST_LABELS } from "../../api/constants/access-request.ts";
import { RESOURCES } from "../../api/constants.ts";
import {
  HANDOVER_ANNOTATION,
  HANDOVER_MESSAGE_ANNOTATION,
  HANDOVER_OWNER_LABEL,
  HANDOVER_STATE_ANNOTATION,
  handoverSecretName,
  IDENTITY_ANNOTATION,
  PAUSED_ANNOTATION,
} from "../../api/move.ts";
import { objectKey } from "../../api/object-key.ts";

/** An object as the API server returns it, as far as a move reads it. */
export interface MovedObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  /** Its metadata: the fields every object has, and whatever else the API server keeps there. */
  readonly metadata: ObjectMeta & { readonly [field: string]: unknown };
  readonly spec?: unknown;
  readonly status?: unknown;
  readonly [field: string]: unknown;
}

/** A kind a move carries: where it is served, whether it is paused and has a status subresource. */
export interface MovedKind {
  readonly kind: string;
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Paused on the source, created paused on the target and resumed there last. */
  readonly pausable: boolean;
  /** Its status is a subresource, written after the object. */
  readonly status: boolean;
}

const core = { group: "", version: "v1" } as const;

/**
 * The kinds a move carries, in the order they are copied (owners before what they own; removed from the source
 * users first, Secrets after their owners). ProviderConfigs are neither paused nor given a status: the target's engine serves them
 * itself, and they leave the source only when no Cluster left there uses them.
 */
export const MOVED_KINDS: readonly MovedKind[] = [
  { kind: "ProviderConfig", ...RESOURCES.ProviderConfig, pausable: false, status: false },
  { kind: "Cluster", ...RESOURCES.Cluster, pausable: true, status: true },
  { kind: "ClusterRequest", ...RESOURCES.ClusterRequest, pausable: true, status: true },
  { kind: "ClusterRequestGrant", ...RESOURCES.ClusterRequestGrant, pausable: true, status: false },
  { kind: "AccessRequest", ...RESOURCES.AccessRequest, pausable: true, status: true },
  { kind: "Secret", ...core, plural: "secrets", namespaced: true, pausable: false, status: false },
];

/** The objects of one kind on one side. */
export type ObjectsByKind = Readonly<Record<string, readonly MovedObject[]>>;

/** What the source holds that a move needs to choose from. */
export interface SourceObjects {
  /** By kind name of {@link MOVED_KINDS} (Secrets: all of the chosen namespaces). */
  readonly objects: ObjectsByKind;
  /** The source's ClusterProfiles, name → the ProviderConfig they came from. */
  readonly profileConfigs: Readonly<Record<string, string>>;
}

/** The objects that move, by kind; Clusters refused by their backend (and everything on them) stay. */
export interface MoveSelection {
  readonly objects: ObjectsByKind;
  /** Clusters that stay, with why (their AccessRequests, ClusterRequests and Secrets stay with them). */
  readonly refused: ReadonlyArray<{ readonly cluster: string; readonly reason: string }>;
}

/**
 * Chooses what moves: every Cluster, ClusterRequest, grant and AccessRequest of `namespaces` (all when empty),
 * except Clusters in `refused` and what refers to them; the ProviderConfigs of the moving Clusters; the Secrets
 * made for the moving objects (an AccessRequest's kubeconfig, a Cluster's hand-over).
 */
export function selectObjects(
  source: SourceObjects,
  namespaces: readonly string[],
  refused: ReadonlyMap<string, string> = new Map(),
): MoveSelection {
  const inScope = (object: MovedObject) =>
    namespaces.length === 0 || namespaces.includes(object.metadata.namespace ?? "");
  const of = (kind: string) => (source.objects[kind] ?? []).filter(inScope);
  const clusters = of("Cluster").filter((cluster) => !refused.has(objectKey(cluster)));
  const staying = (reference: unknown, namespace: string | undefined) => {
    const ref = reference as { name?: string; namespace?: string } | undefined;
    return ref?.name !== undefined && refused.has(`${ref.namespace ?? namespace}/${ref.name}`);
  };
  const requests = of("ClusterRequest").filter(
    (request) => !staying((request.status as { cluster?: unknown })?.cluster, request.metadata.namespace),
  );
  const requestUids = new Set(requests.map((request) => request.metadata.uid));
  const grants = of("ClusterRequestGrant").filter((grant) =>
    requestUids.has((grant.spec as { requestUID?: string })?.requestUID),
  );
  const accessRequests = of("AccessRequest").filter(
    (request) =>
      !staying((request.spec as { clusterRef?: unknown })?.clusterRef, request.metadata.namespace) &&
      !staying((request.spec as { requestRef?: unknown })?.requestRef, request.metadata.namespace) &&
      !requestRefersToStaying(request, of("ClusterRequest"), requestUids),
  );
  const owners = new Set([...clusters, ...accessRequests].map((object) => object.metadata.uid));
  const secrets = of("Secret").filter((secret) => {
    const labels = secret.metadata.labels ?? {};
    return (
      owners.has(labels[ACCESS_REQUEST_LABELS.accessRequestUid]) || owners.has(labels[HANDOVER_OWNER_LABEL])
    );
  });
  const configNames = new Set(
    clusters.map((cluster) => source.profileConfigs[(cluster.spec as { profile?: string })?.profile ?? ""]),
  );
  const configs = (source.objects.ProviderConfig ?? []).filter((config) =>
    configNames.has(config.metadata.name),
  );
  return {
    objects: {
      ProviderConfig: configs,
      Cluster: clusters,
      ClusterRequest: requests,
      ClusterRequestGrant: grants,
      AccessRequest: accessRequests,
      Secret: secrets,
    },
    refused: [...refused].map(([cluster, reason]) => ({ cluster, reason })),
  };
}

/** An AccessRequest whose `requestRef` names a ClusterRequest that stays. */
function requestRefersToStaying(
  request: MovedObject,
  allRequests: readonly MovedObject[],
  moving: ReadonlySet<string | undefined>,
): boolean {
  const ref = (request.spec as { requestRef?: { name?: string; namespace?: string } })?.requestRef;
  if (!ref?.name) return false;
  const named = allRequests.find(
    (other) =>
      other.metadata.name === ref.name &&
      other.metadata.namespace === (ref.namespace ?? request.metadata.namespace),
  );
  return named !== undefined && !moving.has(named.metadata.uid);
}

/** How a Cluster's hand-over stands, from its Secret on the source. */
export type Handover =
  | { readonly state: "waiting" }
  | { readonly state: "ready" }
  | { readonly state: "refused"; readonly reason: string };

/** Reads the hand-over of `cluster` from the source's Secrets of its namespace. */
export function handoverOf(cluster: MovedObject, secrets: readonly MovedObject[]): Handover {
  const name = handoverSecretName(cluster.metadata.name ?? "");
  const secret = secrets.find(
    (candidate) =>
      candidate.metadata.name === name &&
      candidate.metadata.namespace === cluster.metadata.namespace &&
      candidate.metadata.labels?.[HANDOVER_OWNER_LABEL] === cluster.metadata.uid,
  );
  const state = secret?.metadata.annotations?.[HANDOVER_STATE_ANNOTATION];
  if (state === "ready") return { state: "ready" };
  if (state === "refused") {
    return {
      state: "refused",
      reason:
        secret?.metadata.annotations?.[HANDOVER_MESSAGE_ANNOTATION] ?? "its backend cannot hand it over",
    };
  }
  return { state: "waiting" };
}

/** Source uid → target uid, of every moved object found on both sides. */
export type UidMap = ReadonlyMap<string, string>;

/** Fields the API server owns: never copied. */
const SERVER_OWNED = [
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "managedFields",
  "selfLink",
];

/**
 * The copy of `source` for the target: labels, annotations, finalizers, spec and data as they are, every
 * uid of `uids` replaced by its target uid (owner references, the grant's `requestUID`, finalizers and
 * annotations named after a request), owner references whose owner is not (yet) on the target dropped (the
 * garbage collector would delete the copy), the first incarnation's uid kept in {@link IDENTITY_ANNOTATION}, and
 * {@link PAUSED_ANNOTATION} for a pausable kind (the target's engine leaves it alone until the move resumes it).
 * A Cluster that handed state over names its Secret in {@link HANDOVER_ANNOTATION}. No status: that is written
 * through its subresource ({@link statusOf}).
 */
export function copyOf(source: MovedObject, kind: MovedKind, uids: UidMap): MovedObject {
  const { status: _status, ...rest } = repointed(source, uids);
  const metadata = Object.fromEntries(
    Object.entries(rest.metadata).filter(
      ([field]) =>
        !SERVER_OWNED.includes(field) &&
        field !== "deletionTimestamp" &&
        field !== "deletionGracePeriodSeconds",
    ),
  );
  const owners = (rest.metadata.ownerReferences ?? []).filter((owner) =>
    [...uids.values()].includes(owner.uid),
  );
  const annotations: Record<string, string> = { ...rest.metadata.annotations };
  if (kind.pausable) {
    annotations[PAUSED_ANNOTATION] = "true";
    annotations[IDENTITY_ANNOTATION] =
      source.metadata.annotations?.[IDENTITY_ANNOTATION] || (source.metadata.uid ?? "");
  }
  if (kind.kind === "Cluster")
    annotations[HANDOVER_ANNOTATION] = handoverSecretName(source.metadata.name ?? "");
  const { ownerReferences: _owners, ...kept } = metadata as MovedObject["metadata"];
  return {
    ...rest,
    metadata: {
      ...kept,
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ...(owners.length > 0 ? { ownerReferences: owners } : {}),
    },
  };
}

/** The status of `source` for its copy, with its uid references re-pointed; undefined for a kind without one. */
export function statusOf(source: MovedObject, kind: MovedKind, uids: UidMap): unknown {
  return kind.status ? repointed(source, uids).status : undefined;
}

/** `object` with every uid of `uids` replaced by its target uid, wherever it occurs (keys included). */
function repointed(object: MovedObject, uids: UidMap): MovedObject {
  if (uids.size === 0) return object;
  const pattern = new RegExp([...uids.keys()].map(escapeRegExp).join("|"), "g");
  const identity = object.metadata.annotations?.[IDENTITY_ANNOTATION];
  const copy = JSON.parse(
    JSON.stringify(object).replace(pattern, (uid) => uids.get(uid) ?? uid),
  ) as MovedObject;
  // The first incarnation's uid is a name, not a reference: it stays.
  return identity === undefined
    ? copy
    : {
        ...copy,
        metadata: {
          ...copy.metadata,
          annotations: { ...copy.metadata.annotations, [IDENTITY_ANNOTATION]: identity },
        },
      };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** What to do with one moved object whose copy may already be on the target. */
export type CopyDecision = "create" | "update" | "leave";

/**
 * A copy still paused on the target is written again (an earlier run may have stopped half-way); one the
 * target's engine has taken on (resumed), or of a kind that is never paused, is the target's now.
 */
export function copyDecision(kind: MovedKind, existing: MovedObject | undefined): CopyDecision {
  if (!existing) return "create";
  // A Secret is made whole at once, after its owner (its owner reference resolves); a ProviderConfig is served by the target.
  if (!kind.pausable) return "leave";
  return existing.metadata.annotations?.[PAUSED_ANNOTATION] === "true" ? "update" : "leave";
}

/**
 * Whether `secret` is a hand-over the target has, or had, already: its Cluster's copy is resumed (a move places
 * the hand-over before it resumes the copy, and the target's engine takes it and deletes it from then on, so a
 * copy made again would outlive it) or no longer names it. Judged from the copy's pause, not from whether the
 * Secret is still there: the engine may delete it between a move's two reads.
 */
export function handoverTaken(secret: MovedObject, ownerCopy: MovedObject | undefined): boolean {
  if (secret.metadata.labels?.[HANDOVER_OWNER_LABEL] === undefined || ownerCopy === undefined) return false;
  const annotations = ownerCopy.metadata.annotations;
  return annotations?.[PAUSED_ANNOTATION] !== "true" || annotations?.[HANDOVER_ANNOTATION] === undefined;
}

/** The ProviderConfigs that may leave the source: moved ones no Cluster left there uses. */
export function configsToRemove(
  moved: readonly MovedObject[],
  remainingClusters: readonly MovedObject[],
  profileConfigs: Readonly<Record<string, string>>,
): MovedObject[] {
  const used = new Set(
    remainingClusters.map((cluster) => profileConfigs[(cluster.spec as { profile?: string })?.profile ?? ""]),
  );
  return moved.filter((config) => !used.has(config.metadata.name));
}
