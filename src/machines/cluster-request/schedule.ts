/**
 * The scheduler's decision for one ClusterRequest, from what the caches show. Pure and deterministic:
 * the same request and world always give the same answer (Random is seeded by the request's uid).
 */
import type { Cluster, Tenancy } from "../../api/cluster.ts";
import type { ClusterRequest } from "../../api/cluster-request.ts";
import type { ClusterRequestGrant } from "../../api/cluster-request-grant.ts";
import type { ObjectReference } from "../../api/common.ts";
import { CLUSTER_REQUEST_ANNOTATIONS, CLUSTER_REQUEST_LABELS } from "../../api/constants/cluster-request.ts";
import { referenceKey } from "../../api/object-key.ts";
import type { PurposeSpec } from "../../api/purpose.ts";
import type { PurposeMapping, SchedulerConfig } from "../../api/scheduler-config.ts";
import { candidateNamespace, chooseCluster, hasRoom, unfitReason } from "./cluster-choice.ts";
import {
  type CopiedMetadata,
  claimedPrefix,
  copiedMetadata,
  copiedMetadataInSync,
  prefixesOfOthers,
  servedRequests,
  serves,
} from "./cluster-claims.ts";
import {
  clusterNameProblem,
  perRequestClusterName,
  perRequestPrefix,
  perRequestPrefixProblem,
  singletonClusterName,
} from "./cluster-names.ts";
import { newCluster } from "./new-cluster.ts";
import { grantPrefix } from "./prefixes.ts";
import { chooseProfile } from "./profile-choice.ts";
import { requestWishes } from "./request-wishes.ts";
import { matchTraits } from "./traits.ts";

/** What the scheduler sees of the world. */
export interface SchedulingView {
  /** The configuration in force; undefined when the scheduler has none. */
  readonly config: SchedulerConfig | undefined;
  /** Purpose resources by name. */
  readonly purposes: ReadonlyMap<string, PurposeSpec>;
  /** Every known ClusterProfile → the traits its clusters have. */
  readonly profileTraits: ReadonlyMap<string, readonly string[]>;
  readonly clusters: readonly Cluster[];
  /** UIDs of the ClusterRequests that exist and are not being deleted. */
  readonly liveRequests: ReadonlySet<string>;
  /** This request's grant, if one exists for this very request (same uid). */
  readonly grant: ClusterRequestGrant | undefined;
}

/** Where the request is (to be) served. */
export interface Placement {
  /** The Cluster as it exists, or as it is to be created (`created: true`). */
  readonly cluster: Cluster;
  readonly created: boolean;
  readonly shared: boolean;
  /** Shared: requests the Cluster may serve at most (0 = unlimited); re-checked on the fresh Cluster when claiming. */
  readonly tenancyCount: number;
  /** Shared: the prefix the request holds or is to get. */
  readonly prefix: string | undefined;
  /** Shared: what the request proposes, for re-deciding the prefix on the fresh Cluster. */
  readonly proposedPrefix: string | undefined;
  /** Exclusive: labels and annotations kept in sync from the request. */
  readonly copied: CopiedMetadata | undefined;
  /** Everything is in place: the Cluster serves the request, the claim and the grant say so, metadata in sync. */
  readonly held: boolean;
}

/** The decision. */
export type Decision =
  | { readonly kind: "place"; readonly placement: Placement }
  /** The Cluster the request held is being deleted: let go of it, then recreate it under its name. */
  | { readonly kind: "replace"; readonly cluster: Cluster; readonly message: string }
  /** Nothing to do until something changes, e.g. a Cluster of the name is still being deleted. */
  | { readonly kind: "wait"; readonly message: string }
  | { readonly kind: "deny"; readonly reason: DenialReason; readonly message: string }
  /** The configuration cannot serve the request (e.g. unknown purpose); retried when it changes. */
  | { readonly kind: "misconfigured"; readonly message: string };

/** Why a request is Denied. */
export type DenialReason = "ClusterConflict" | "MissingTrait" | "InvalidRequest";

/** The Cluster the request was given before, by the grant, else its status, else a Cluster carrying its finalizer. */
export function earlierAssignment(
  request: ClusterRequest,
  view: Pick<SchedulingView, "grant" | "clusters">,
): ObjectReference | undefined {
  if (view.grant) return view.grant.spec.clusterRef;
  if (request.status?.cluster) return request.status.cluster;
  const uid = request.metadata.uid ?? "";
  const holding = view.clusters
    .filter((cluster) => serves(cluster, uid))
    .sort((a, b) => referenceKey(a.metadata).localeCompare(referenceKey(b.metadata)));
  const first = holding[0];
  return first ? { name: first.metadata.name ?? "", namespace: first.metadata.namespace ?? "" } : undefined;
}

/** Decides where the request is served (see {@link Decision}). */
export function schedule(request: ClusterRequest, view: SchedulingView): Decision {
  const { config } = view;
  const purpose = request.spec.purpose;
  if (!config) return { kind: "misconfigured", message: "the scheduler has no configuration" };
  const mapping = config.purposeMappings[purpose];
  const earlier = earlierAssignment(request, view);
  const existing = earlier
    ? view.clusters.find((cluster) => referenceKey(cluster.metadata) === referenceKey(earlier))
    : undefined;

  // A Cluster the request already holds stays its Cluster, whatever the configuration says now.
  if (existing && !existing.metadata.deletionTimestamp) {
    return { kind: "place", placement: placementOn(request, view, existing, mapping?.tenancyCount ?? 0) };
  }
  if (existing && serves(existing, request.metadata.uid ?? "")) {
    return {
      kind: "replace",
      cluster: existing,
      message: `Cluster ${referenceKey(existing.metadata)} is being deleted; it is made again under the same name once it is gone`,
    };
  }
  if (existing) {
    return {
      kind: "wait",
      message: `Cluster ${referenceKey(existing.metadata)} is being deleted; waiting until it is gone to make it again`,
    };
  }
  if (!mapping) {
    const known = Object.keys(config.purposeMappings).sort().join(", ") || "none";
    return {
      kind: "misconfigured",
      message: `the scheduler configuration has no mapping for purpose "${purpose}" (known purposes: ${known}; a purpose another scheduler answers belongs in purposesServedElsewhere)`,
    };
  }
  const wishes = requestWishes(request, view.purposes);
  if ("problem" in wishes) return { kind: "deny", reason: "InvalidRequest", message: wishes.problem };
  const tenancy: Tenancy = wishes.dedicated === true ? "Exclusive" : mapping.template.spec.tenancy;
  const namespace = mapping.template.metadata.namespace || (request.metadata.namespace ?? "");

  // Vanished: made again under the name it had, from the template.
  if (earlier)
    return placeNew(
      request,
      view,
      mapping,
      tenancy,
      wishes.traits,
      { name: earlier.name },
      earlier.namespace,
    );

  if (tenancy === "Shared") {
    const within = candidateNamespace(config, mapping, request.metadata.namespace ?? "");
    const fitting = view.clusters
      .filter((cluster) => within === undefined || cluster.metadata.namespace === within)
      .filter((cluster) => hasRoom(cluster, mapping.tenancyCount))
      .flatMap((cluster) => {
        const offered = view.profileTraits.get(cluster.spec.profile) ?? [];
        if (unfitReason(cluster, purpose, config, mapping, offered, wishes.traits) !== undefined) return [];
        return [{ cluster, preferred: matchTraits(wishes.traits, offered).preferred }];
      });
    const chosen = chooseCluster(fitting, config.strategy, request.metadata.uid ?? "");
    if (chosen) return { kind: "place", placement: placementOn(request, view, chosen, mapping.tenancyCount) };
    // No Cluster fits, and none could be made: say which trait is missing rather than which Cluster clashes.
    const choice = chooseProfile(mapping.template.spec.profile, wishes.traits, view.profileTraits);
    if ("missing" in choice) return { kind: "deny", reason: "MissingTrait", message: choice.message };
    if (mapping.tenancyCount === 0) {
      const name = singletonClusterName(mapping, purpose);
      const problem = clusterNameProblem(name);
      if (problem !== undefined) return { kind: "misconfigured", message: `purpose ${purpose}: ${problem}` };
      const clash = view.clusters.find(
        (cluster) => referenceKey(cluster.metadata) === referenceKey({ namespace, name }),
      );
      if (clash) return clashWith(clash, view, mapping, wishes.traits, purpose, config);
      return placeNew(request, view, mapping, tenancy, wishes.traits, { name }, namespace);
    }
  }

  const prefix = perRequestPrefix(mapping, purpose);
  // The configuration check refuses such prefixes for Exclusive and limited mappings; a dedicated Purpose
  // can still ask an unlimited mapping for a Cluster of its own.
  const problem = perRequestPrefixProblem(prefix);
  if (problem !== undefined) return { kind: "misconfigured", message: `purpose ${purpose}: ${problem}` };
  if (request.metadata.labels?.[CLUSTER_REQUEST_LABELS.randomizeClusterName] === "true") {
    return placeNew(request, view, mapping, tenancy, wishes.traits, { generateName: prefix }, namespace);
  }
  const name =
    perRequestClusterName(prefix, request.metadata.namespace ?? "", request.metadata.name ?? "") ?? "";
  const clash = view.clusters.find(
    (cluster) => referenceKey(cluster.metadata) === referenceKey({ namespace, name }),
  );
  if (!clash) return placeNew(request, view, mapping, tenancy, wishes.traits, { name }, namespace);
  if (clash.metadata.deletionTimestamp) {
    return {
      kind: "wait",
      message: `Cluster ${namespace}/${name} is being deleted; waiting until it is gone to make it again`,
    };
  }
  const others = servedRequests(clash).filter((uid) => view.liveRequests.has(uid));
  if (others.length > 0) {
    return {
      kind: "deny",
      reason: "ClusterConflict",
      message: `Cluster ${namespace}/${name}, the name this request's cluster must have, already serves another ClusterRequest (uid ${others.join(", ")})`,
    };
  }
  // Nobody live holds it (a leftover of this request's earlier self, or of a deleted one): adopt it.
  return { kind: "place", placement: placementOn(request, view, clash, mapping.tenancyCount) };
}

/** The singleton name of an unlimited Shared purpose is taken by a Cluster that did not fit. */
function clashWith(
  clash: Cluster,
  view: SchedulingView,
  mapping: PurposeMapping,
  wishes: Parameters<typeof unfitReason>[5],
  purpose: string,
  config: SchedulerConfig,
): Decision {
  const where = referenceKey(clash.metadata);
  if (clash.metadata.deletionTimestamp) {
    return {
      kind: "wait",
      message: `Cluster ${where} is being deleted; waiting until it is gone to make it again`,
    };
  }
  const offered = view.profileTraits.get(clash.spec.profile) ?? [];
  const why = unfitReason(clash, purpose, config, mapping, offered, wishes) ?? "it is full";
  return {
    kind: "deny",
    reason: "ClusterConflict",
    message: `Cluster ${where}, the name of the shared cluster for purpose ${purpose}, exists but cannot serve this request: ${why}`,
  };
}

function placeNew(
  request: ClusterRequest,
  view: SchedulingView,
  mapping: PurposeMapping,
  tenancy: Tenancy,
  wishes: Parameters<typeof chooseProfile>[1],
  name: { name: string } | { generateName: string },
  namespace: string,
): Decision {
  const choice = chooseProfile(mapping.template.spec.profile, wishes, view.profileTraits);
  if ("missing" in choice) return { kind: "deny", reason: "MissingTrait", message: choice.message };
  const shared = tenancy === "Shared";
  const proposedPrefix = proposedPrefixOf(request);
  const prefix = shared
    ? view.grant?.spec.prefix ||
      grantPrefix({ proposed: proposedPrefix, taken: [], seed: request.metadata.uid ?? "" })
    : undefined;
  const copied = shared ? undefined : copiedMetadata(request.metadata);
  const cluster = newCluster(request, mapping, {
    name,
    namespace,
    profile: choice.profile,
    tenancy,
    copied,
    prefix,
  });
  return {
    kind: "place",
    placement: {
      cluster,
      created: true,
      shared,
      tenancyCount: shared ? mapping.tenancyCount : 0,
      prefix,
      proposedPrefix,
      copied,
      held: false,
    },
  };
}

/** Placement on an existing Cluster: held when its finalizer, claim, grant and metadata all say so. */
function placementOn(
  request: ClusterRequest,
  view: SchedulingView,
  cluster: Cluster,
  tenancyCount: number,
): Placement {
  const uid = request.metadata.uid ?? "";
  const shared = cluster.spec.tenancy === "Shared";
  const proposedPrefix = proposedPrefixOf(request);
  const grantHere =
    view.grant && referenceKey(view.grant.spec.clusterRef) === referenceKey(cluster.metadata)
      ? view.grant
      : undefined;
  const prefix = shared
    ? grantHere?.spec.prefix ||
      claimedPrefix(cluster, uid) ||
      grantPrefix({ proposed: proposedPrefix, taken: prefixesOfOthers(cluster, uid), seed: uid })
    : undefined;
  // Copied metadata goes only to a Cluster that serves this request alone.
  const alone = servedRequests(cluster).every((other) => other === uid);
  const copied = !shared && alone ? copiedMetadata(request.metadata) : undefined;
  const held =
    serves(cluster, uid) &&
    grantHere !== undefined &&
    grantHere.spec.prefix === (prefix ?? "") &&
    (!shared || claimedPrefix(cluster, uid) === prefix) &&
    (copied === undefined || copiedMetadataInSync(cluster, copied));
  return { cluster, created: false, shared, tenancyCount, prefix, proposedPrefix, copied, held };
}

function proposedPrefixOf(request: ClusterRequest): string | undefined {
  return request.metadata.annotations?.[CLUSTER_REQUEST_ANNOTATIONS.prefix];
}
