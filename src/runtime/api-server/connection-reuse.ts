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

/** The part of an undici dispatch this engine looks at. */
export interface DispatchOptions {
  readonly method: string;
  readonly origin?: string | URL;
  readonly path: string;
}

/** An undici (v7+) response handler; only what the interceptors here call. */
export interface DispatchHandler {
  onResponseStart?(controller: unknown, statusCode: number, headers: unknown, statusMessage?: string): void;
  onResponseError?(controller: unknown, error: Error): void;
  [other: string]: unknown;
}

export type Dispatch = (options: DispatchOptions, handler: DispatchHandler) => boolean;
/** An undici interceptor: wraps the dispatch of every request made through a KubeConfig. */
export type Interceptor = (dispatch: Dispatch) => Dispatch;

interface ComposableDispatcher {
  compose(interceptor: Interceptor): unknown;
}

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
  const target = kubeConfig as unknown as Reusing;
  if (typeof target.createDispatcher !== "function" || target.connectionsReused) return kubeConfig;
  const create = target.createDispatcher.bind(kubeConfig);
  const dispatchers = new Map<string, unknown>();
  const interceptors: Interceptor[] = [];
  // Read at each request, so interceptors added later apply to dispatchers made earlier too.
  const throughInterceptors: Interceptor = (dispatch) => (options, handler) =>
    interceptors.reduceRight((next, interceptor) => interceptor(next), dispatch)(options, handler);
  target.createDispatcher = (cluster, agentOptions) => {
    const key = dispatcherKey(cluster, agentOptions);
    if (!dispatchers.has(key)) {
      const dispatcher = create(cluster, agentOptions) as Partial<ComposableDispatcher>;
      dispatchers.set(
        key,
        typeof dispatcher.compose === "function" ? dispatcher.compose(throughInterceptors) : dispatcher,
      );
    }
    return dispatchers.get(key);
  };
  target.connectionsReused = true;
  target.interceptors = interceptors;
  return kubeConfig;
}

/**
 * Passes every request made through `kubeConfig` from now on through `interceptor` (after those added
 * before), until the returned function removes it. Reuses its connections if it did not yet. When this
 * client-node has no dispatcher to intercept, nothing is intercepted.
 */
export function interceptRequests(kubeConfig: KubeConfig, interceptor: Interceptor): () => void {
  const interceptors = (reuseConnections(kubeConfig) as unknown as Reusing).interceptors;
  if (!interceptors) return () => {};
  interceptors.push(interceptor);
  return () => {
    const at = interceptors.indexOf(interceptor);
    if (at >= 0) interceptors.splice(at, 1);
  };
}

interface Reusing {
  createDispatcher?: CreateDispatcher;
  connectionsReused?: true;
  interceptors?: Interceptor[];
}
