/**
 * The namespaces a Cluster's tenant is admin of when its backend grants admin of some namespaces only (contract
 * 1.2, `AdminAccess.scope.namespaces`, e.g. the namespaced example backend): read for the Cluster's status
 * (`providerStatus.tenantNamespaces`), so a person sees which namespaces are theirs without a kubeconfig.
 *
 * A scope is fixed for a cluster's life, so it is asked once: never again once the status records it, and at
 * most once per engine for a cluster whose admin is cluster-wide (remembered in the kind's state). It is asked
 * through the engine's shared admin-access memory, so an AccessRequest's recent ask answers it too.
 */
import type { ClusterObservation, ClusterTarget } from "../../../api/backend.ts";
import type { Cluster } from "../../../api/cluster.ts";
import { errorMessage } from "../../../api/error-message.ts";
import type { KindContext } from "../../machine-kind.ts";

/** What the engine learnt of its Clusters' admin scopes, by uid: the namespaces, or `null` for cluster-wide. */
export type KnownScopes = Map<string, readonly string[] | null>;

/** The namespaces recorded in the Cluster's status, if any. */
export function recordedTenantNamespaces(cluster: Cluster): readonly string[] | undefined {
  const recorded = cluster.status?.providerStatus?.tenantNamespaces;
  return Array.isArray(recorded) && recorded.every((name) => typeof name === "string")
    ? (recorded as string[])
    : undefined;
}

/**
 * The namespaces `cluster`'s tenant is admin of, once the backend reports it ready; undefined while it is not,
 * for a cluster-wide admin, or when the backend could not say (the status keeps what it had; asked again next look).
 */
export async function tenantNamespaces(
  cluster: Cluster,
  target: ClusterTarget,
  observation: ClusterObservation,
  context: KindContext,
  known: KnownScopes,
): Promise<readonly string[] | undefined> {
  const uid = target.uid;
  if (cluster.metadata.deletionTimestamp) {
    known.delete(uid);
    return undefined;
  }
  if (!observation.exists || observation.phase !== "ready") return undefined;
  const recorded = recordedTenantNamespaces(cluster);
  if (recorded) return recorded;
  if (known.has(uid)) return known.get(uid) ?? undefined;
  if (!(await context.backends.of(target)).capabilities.adminAccess) return undefined;
  try {
    const access = await context.adminAccess.get(target, context.timing.resyncMs, observation);
    if (!access) return undefined;
    const namespaces = access.scope?.namespaces;
    known.set(uid, namespaces && namespaces.length > 0 ? [...namespaces] : null);
    return known.get(uid) ?? undefined;
  } catch (error) {
    context.log.warn("the backend's admin scope could not be read (asked again at the next look)", {
      cluster: `${target.namespace}/${target.name}`,
      error: errorMessage(error),
    });
    return undefined;
  }
}
