/**
 * One TLS connection pool per API server and credentials, instead of one per request.
 *
 * client-node 2.x builds a new undici Agent in `KubeConfig.createDispatcher` for every request, so no
 * connection is ever reused and every request pays a TLS handshake (about 15 % of the engine's CPU in a
 * profile of the Cluster benchmark). This keeps the first Agent made for each server and TLS material and
 * hands it out again; headers (bearer tokens, which may rotate) are still set per request.
 *
 * A connection left idle is retired before the API server closes it: kube-apiserver ends an HTTP/2
 * connection with no open stream after 90 s (GOAWAY), and a request undici sends on it in that moment
 * fails ("fetch failed", GOAWAY code 0) where Go's client would have retried it. So a dispatcher with
 * nothing in flight for {@link IDLE_RETIREMENT_MS} is closed and the next request gets a new one.
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
  /** Each interceptor wraps the ones before it. */
  compose(...interceptors: Interceptor[]): ComposableDispatcher;
}

/** Idle time after which a dispatcher is retired: well inside kube-apiserver's 90 s HTTP/2 idle timeout. */
export const IDLE_RETIREMENT_MS = 60_000;

/** What says whether a dispatcher's connection may still be open: requests in flight, and since when none. */
interface Activity {
  inFlight: number;
  /** When the last request ended, or the dispatcher was made or last handed out. */
  idleSince: number;
}

/** A dispatcher handed out for one key, and its activity. */
interface Pooled {
  readonly dispatcher: ComposableDispatcher & { close?(): Promise<void> | undefined };
  readonly activity: Activity;
}

/**
 * `handler` with `before[name]` called ahead of each of its methods so named (those it has), every other call going to
 * it as is: a proxy rather than a copy, as undici's handlers keep private state.
 */
export function observingHandler(
  handler: DispatchHandler,
  before: Readonly<Record<string, (...args: never[]) => void>>,
): DispatchHandler {
  return new Proxy(handler, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      const hook = typeof property === "string" ? before[property] : undefined;
      if (!hook) return value.bind(target);
      return (...args: never[]) => {
        hook(...args);
        return value.apply(target, args);
      };
    },
  });
}

/** Keeps `activity` counting the requests in flight, and since when none has been. */
function trackingActivity(activity: Activity): Interceptor {
  return (dispatch) => (options, handler) => {
    activity.inFlight++;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      activity.inFlight--;
      activity.idleSince = performance.now();
    };
    const ending = observingHandler(handler, { onResponseEnd: end, onResponseError: end });
    try {
      return dispatch(options, ending);
    } catch (error) {
      end();
      throw error;
    }
  };
}

/** Closes `pooled` (its requests in flight still finish) if it has been idle long enough; says whether it did. */
function retireIfIdle(pooled: Pooled): boolean {
  const { inFlight, idleSince } = pooled.activity;
  if (inFlight > 0 || performance.now() - idleSince < IDLE_RETIREMENT_MS) return false;
  pooled.dispatcher.close?.()?.catch(() => {}); // closing an idle pool has nothing to report
  return true;
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
  const dispatchers = new Map<string, Pooled>();
  const interceptors: Interceptor[] = [];
  // Read at each request, so interceptors added later apply to dispatchers made earlier too.
  const throughInterceptors: Interceptor = (dispatch) => (options, handler) =>
    interceptors.reduceRight((next, interceptor) => interceptor(next), dispatch)(options, handler);
  target.createDispatcher = (cluster, agentOptions) => {
    const key = dispatcherKey(cluster, agentOptions);
    const current = dispatchers.get(key);
    if (current && !retireIfIdle(current)) {
      // Handed out is about to be used: no other request may retire it before this one is dispatched.
      if (current.activity.inFlight === 0) current.activity.idleSince = performance.now();
      return current.dispatcher;
    }
    const made = create(cluster, agentOptions) as Partial<ComposableDispatcher>;
    if (typeof made.compose !== "function") return made; // its requests cannot be counted: not kept, one per request (client-node's own way)
    const activity: Activity = { inFlight: 0, idleSince: performance.now() };
    const dispatcher = made.compose(throughInterceptors, trackingActivity(activity)) as Pooled["dispatcher"];
    dispatchers.set(key, { dispatcher, activity });
    return dispatcher;
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
