/** Which replica owns an AccessRequest in sharded mode: the kind's machine and its preparation agree on it. */
import type { AccessRequest } from "../../../api/access-request.ts";
import { objectKey, referenceKey } from "../../../api/object-key.ts";

/**
 * Sharded mode: an AccessRequest goes to the replica that owns its Cluster (the Cluster's key), so OIDC
 * requests on one Cluster stay serialized and a Cluster's access is handled beside it. clusterRef never
 * changes once set; a request that only names a ClusterRequest moves once, when it learns its Cluster,
 * before which it has nothing to act on.
 */
export function accessRequestShardKey(request: AccessRequest): string {
  const ref = request.spec.clusterRef;
  return ref ? referenceKey(ref) : objectKey(request);
}
