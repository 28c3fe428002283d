/**
 * A claim on a Cluster, computed against the Cluster as just read from the API server (not the cache),
 * and written guarded by its resourceVersion: so tenancyCount and prefix uniqueness hold even when
 * several requests race for one Cluster.
 */
import { produce } from "immer";
import type { Cluster } from "../../api/cluster.ts";
import { applyFinalizerWish } from "../shared/finalizer.ts";
import { hasRoom } from "./cluster-choice.ts";
import {
  type CopiedMetadata,
  claimedPrefix,
  copiedMetadata,
  prefixClaimKey,
  prefixesOfOthers,
  requestFinalizer,
  servedRequests,
  serves,
} from "./cluster-claims.ts";
import { grantPrefix, prefixesCollide } from "./prefixes.ts";
import type { Placement } from "./schedule.ts";

/** The Cluster's metadata with the claim, and the prefix it grants; or why the Cluster cannot take the request now. */
export type ClaimResult =
  | { readonly metadata: Cluster["metadata"]; readonly prefix: string | undefined }
  | { readonly problem: string };

/** Claims `fresh` for request `uid` as `placement` says, re-checking what may have changed since the decision. */
export function claimOn(fresh: Cluster, placement: Placement, uid: string): ClaimResult {
  const where = `${fresh.metadata.namespace}/${fresh.metadata.name}`;
  const already = serves(fresh, uid);
  if (fresh.metadata.deletionTimestamp && !already) return { problem: `Cluster ${where} is being deleted` };
  const others = servedRequests(fresh).filter((other) => other !== uid);
  if (!already && placement.shared && !hasRoom(fresh, placement.tenancyCount)) {
    return { problem: `Cluster ${where} is full (${others.length} of ${placement.tenancyCount} requests)` };
  }
  // An Exclusive Cluster's name is this request's own (a digest of it), and the decision adopted it only
  // if no live request holds it: nothing to race for.
  const taken = prefixesOfOthers(fresh, uid);
  const held = claimedPrefix(fresh, uid);
  const prefix = !placement.shared
    ? undefined
    : (held ??
      (placement.prefix !== undefined &&
      !taken.some((other) => prefixesCollide(other, placement.prefix ?? ""))
        ? placement.prefix
        : grantPrefix({ proposed: placement.proposedPrefix, taken, seed: uid })));
  const metadata = produce(fresh.metadata, (draft) => {
    applyFinalizerWish(draft, requestFinalizer(uid), "add");
    if (prefix !== undefined) {
      draft.annotations ??= {};
      draft.annotations[prefixClaimKey(uid)] = prefix;
    }
    if (placement.copied) syncCopied(draft, placement.copied);
  });
  return { metadata, prefix };
}

/** `fresh`'s metadata without request `uid`'s finalizer and prefix claim. */
export function withoutClaim(fresh: Cluster, uid: string): Cluster["metadata"] {
  return produce(fresh.metadata, (draft) => {
    applyFinalizerWish(draft, requestFinalizer(uid), "remove");
    if (draft.annotations && prefixClaimKey(uid) in draft.annotations)
      delete draft.annotations[prefixClaimKey(uid)];
  });
}

type MetadataDraft = { labels?: Record<string, string>; annotations?: Record<string, string> };

/** Makes the draft's prefixed labels and annotations exactly `wanted`'s (others of the prefix removed). */
function syncCopied(draft: MetadataDraft, wanted: CopiedMetadata): void {
  const actual = copiedMetadata(draft);
  for (const key of Object.keys(actual.labels)) if (!(key in wanted.labels)) delete draft.labels?.[key];
  for (const key of Object.keys(actual.annotations))
    if (!(key in wanted.annotations)) delete draft.annotations?.[key];
  if (Object.keys(wanted.labels).length > 0) draft.labels = { ...draft.labels, ...wanted.labels };
  if (Object.keys(wanted.annotations).length > 0)
    draft.annotations = { ...draft.annotations, ...wanted.annotations };
}
