/** The Cluster the scheduler creates for a request, from its purpose's template. */
import type { Cluster, Tenancy } from "../../api/cluster.ts";
import type { ClusterRequest } from "../../api/cluster-request.ts";
import { CLUSTER_REQUEST_LABELS } from "../../api/constants/cluster-request.ts";
import { CLUSTERS_API_VERSION } from "../../api/constants.ts";
import type { PurposeMapping } from "../../api/scheduler-config.ts";
import { type CopiedMetadata, prefixClaimKey, requestFinalizer } from "./cluster-claims.ts";

/** What varies per new Cluster besides the template. */
export interface NewClusterChoice {
  /** A fixed name, or a generateName when the request asks for a random one. */
  readonly name: { readonly name: string } | { readonly generateName: string };
  readonly namespace: string;
  readonly profile: string;
  readonly tenancy: Tenancy;
  /** Exclusive only: the request's `metadata.open-control-plane.io/*` labels and annotations. */
  readonly copied: CopiedMetadata | undefined;
  /** Shared only: the name prefix granted to the request. */
  readonly prefix: string | undefined;
}

/**
 * The template's labels, annotations and spec, with: the request's finalizer (so the Cluster shows whom
 * it serves from its first moment), `delete-without-requests: "true"` unless the template says otherwise,
 * the purpose appended to `spec.purposes`, the chosen profile and tenancy, and the copied metadata or
 * the prefix claim.
 */
export function newCluster(
  request: ClusterRequest,
  mapping: PurposeMapping,
  choice: NewClusterChoice,
): Cluster {
  const template = mapping.template;
  const uid = request.metadata.uid ?? "";
  const purposes = [...(template.spec.purposes ?? [])];
  if (!purposes.includes(request.spec.purpose)) purposes.push(request.spec.purpose);
  const labels: Record<string, string> = {
    [CLUSTER_REQUEST_LABELS.deleteWithoutRequests]: "true",
    ...template.metadata.labels,
    ...choice.copied?.labels,
  };
  const annotations: Record<string, string> = {
    ...template.metadata.annotations,
    ...choice.copied?.annotations,
    ...(choice.prefix === undefined ? {} : { [prefixClaimKey(uid)]: choice.prefix }),
  };
  return {
    apiVersion: CLUSTERS_API_VERSION,
    kind: "Cluster",
    metadata: {
      ...choice.name,
      namespace: choice.namespace,
      labels,
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      finalizers: [requestFinalizer(uid)],
    },
    spec: {
      profile: choice.profile,
      tenancy: choice.tenancy,
      purposes,
      ...(template.spec.clusterConfigs?.length ? { clusterConfigs: template.spec.clusterConfigs } : {}),
      ...(template.spec.kubernetes?.version
        ? { kubernetes: { version: template.spec.kubernetes.version } }
        : {}),
    },
  };
}
