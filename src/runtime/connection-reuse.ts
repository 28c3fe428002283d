/**
 * One TLS connection pool per API server and credentials, instead of one per request.
 *
 * client-node 2.x builds a new undici Agent in `KubeConfig.createDispatcher` for every request, so no
 * connection is ever reused and every request pays a TLS handshake (about 15 % of the engine's CPU in a
 * profile of the Cluster benchmark). This keeps the first Agent made for each server and TLS material and
 * hands it out again; headers (bearer tokens, which may rotate) are still set per request.
 */
import { createHash } from "node:crypto";
import type { KubeConfig } from "@kubernetes/client-node";

type CreateDispatcher = (cluster: unknown, agentOptions: Record<string, unknown>) => unknown;

/** What makes two requests' dispatchers interchangeable: the server, a proxy, and the TLS material. */
function dispatcherKey(cluster: unknown, agentOptions: Record<string, unknown>): string {
  const { server, proxyUrl } = (cluster ?? {}) as { server?: string; proxyUrl?: string };
  const digest = createHash("sha256");
  for (const field of ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"]) {
    const value = agentOptions[field];
    digest.update(`${field}=`);
    if (value !== undefined) digest.update(Buffer.isBuffer(value) ? value : String(value));
    digest.update(";");
  }
  return `${server ?? ""}|${proxyUrl ?? ""}|${digest.digest("hex")}`;
}

/**
 * Makes `kubeConfig` reuse its dispatchers (returns it). Idempotent. If a client-node release no longer
 * has `createDispatcher`, the configuration is returned unchanged (requests still work, just without reuse).
 */
export function reuseConnections(kubeConfig: KubeConfig): KubeConfig {
  const target = kubeConfig as unknown as { createDispatcher?: CreateDispatcher; connectionsReused?: true };
  if (typeof target.createDispatcher !== "function" || target.connectionsReused) return kubeConfig;
  const create = target.createDispatcher.bind(kubeConfig);
  const dispatchers = new Map<string, unknown>();
  target.createDispatcher = (cluster, agentOptions) => {
    const key = dispatcherKey(cluster, agentOptions);
    if (!dispatchers.has(key)) dispatchers.set(key, create(cluster, agentOptions));
    return dispatchers.get(key);
  };
  target.connectionsReused = true;
  return kubeConfig;
}
