/**
 * The deprecated APIs a cluster's API server says were requested, from its `/metrics` text: the gauge
 * `apiserver_requested_deprecated_apis{group,version,resource,subresource,removed_release} 1`, set by kube-apiserver
 * on the first request of a deprecated API and kept until the API server restarts. Pure: the text is given.
 */

/** One deprecated API requested on a cluster. */
export interface DeprecatedApi {
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  /** The release that no longer serves it (`1.37`); "" when no removal is planned. */
  readonly removedRelease: string;
}

const METRIC = "apiserver_requested_deprecated_apis";
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** The requested deprecated APIs in Prometheus text `text` (duplicates by subresource folded into one). */
export function parseDeprecatedApis(text: string): DeprecatedApi[] {
  const found = new Map<string, DeprecatedApi>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${METRIC}{`)) continue;
    const close = line.lastIndexOf("}");
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(/\s+/)[0],
    );
    if (!(value > 0)) continue;
    const labels = new Map(
      [...line.slice(METRIC.length + 1, close).matchAll(LABEL)].map((m) => [m[1], m[2]]),
    );
    const api: DeprecatedApi = {
      group: labels.get("group") ?? "",
      version: labels.get("version") ?? "",
      resource: labels.get("resource") ?? "",
      removedRelease: labels.get("removed_release") ?? "",
    };
    found.set(apiName(api), api);
  }
  return [...found.values()];
}

/** `networking.k8s.io/v1beta1 servicecidrs` (`v1 componentstatuses` for the core group). */
export function apiName(api: DeprecatedApi): string {
  return `${api.group ? `${api.group}/` : ""}${api.version} ${api.resource}`;
}
