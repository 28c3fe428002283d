/** A test API server's own count of the requests it served: the `apiserver_request_total` series of its /metrics. */
import type { KubeConfig } from "@kubernetes/client-node";
import { getApiServerText } from "../../src/util/api-server-request.ts";

/** One series of `apiserver_request_total`: its labels as written (`code="200",…,verb="WATCH"`) and its count. */
export interface RequestCount {
  readonly labels: string;
  readonly count: number;
}

/** Every series of `apiserver_request_total` the API server `kubeConfig` names reports now. */
export async function apiServerRequestCounts(kubeConfig: KubeConfig): Promise<RequestCount[]> {
  const metrics = await getApiServerText(kubeConfig, "/metrics");
  return [...metrics.matchAll(/^apiserver_request_total\{([^}]*)\} (\S+)$/gm)].map(
    ([, labels = "", value]) => ({
      labels,
      count: Number(value),
    }),
  );
}
