/** How the kind backend names a Cluster's kind cluster: openMCP's kind provider's way, the engine's former way, or an annotation's. */
import { createHash } from "node:crypto";
import type { ClusterTarget } from "../../api/backend.ts";

/**
 * The annotation that names a Cluster's kind cluster instead of deriving the name (openMCP's kind provider
 * honours it): a kind cluster of that name that already runs is adopted — described, never re-created, and
 * left running when the Cluster is deleted (e.g. the landscape's own platform cluster).
 */
export const KIND_NAME_ANNOTATION = "kind.clusters.openmcp.cloud/name";

/**
 * The longest kind cluster name: kind names the node container (and its hostname) `<name>-control-plane`,
 * and a hostname has at most 63 characters.
 */
export const KIND_NAME_MAX = 63 - "-control-plane".length;

/** How much of a Cluster's name {@link kindClusterNameOf} keeps: the rest of {@link KIND_NAME_MAX} is `.` and 8 uid characters. */
export const KIND_NAME_PREFIX_MAX = KIND_NAME_MAX - 9;

/**
 * The kind cluster name for a Cluster, as openMCP's kind provider names it: `<cluster name>.<first 8 characters
 * of its uid>`, so that tools which find a Cluster's kind cluster by the Cluster's name as prefix (openMCP's e2e
 * framework) find it, and a kind cluster openMCP's provider made for the Cluster is the one the engine looks for.
 * A Cluster name longer than {@link KIND_NAME_PREFIX_MAX} characters is cut to that length (a trailing `-` or
 * `.` dropped): the uid part keeps it unique.
 */
export function kindClusterNameOf(name: string, uid: string): string {
  const prefix = name.slice(0, KIND_NAME_PREFIX_MAX).replace(/[-.]+$/, "");
  return `${prefix}.${uid.slice(0, 8)}`;
}

/**
 * The engine's former kind cluster name for a uid: `omc-` and 12 hex digits of its SHA-256. Clusters made
 * before {@link kindClusterNameOf} keep it, and pool members (which have no Cluster name) are named so.
 */
export function kindClusterName(uid: string): string {
  return `omc-${createHash("sha256").update(uid).digest("hex").slice(0, 12)}`;
}

/**
 * The kind cluster name of a target: its {@link KIND_NAME_ANNOTATION}, else {@link kindClusterNameOf}. Throws
 * saying why when the annotation is no kind cluster name.
 */
export function kindNameOf(
  target: Pick<ClusterTarget, "uid" | "annotations" | "namespace" | "name">,
): string {
  const named = target.annotations?.[KIND_NAME_ANNOTATION];
  if (named === undefined) return kindClusterNameOf(target.name, target.uid);
  // At most 50, as kind's node hostnames allow (64 with `-control-plane`); derived names stay within 49.
  if (!/^[a-z0-9]([-a-z0-9.]{0,48}[a-z0-9])?$/.test(named))
    throw new Error(
      `Cluster ${target.namespace}/${target.name}: annotation ${KIND_NAME_ANNOTATION} "${named}" is not a kind cluster name (lower-case letters, digits, '-' and '.', at most 50)`,
    );
  return named;
}
