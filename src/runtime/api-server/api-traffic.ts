/**
 * What the engine sends to the API server, seen and shaped at the transport: every response counted by
 * method and code (client-go's `rest_client_requests_total`), and an optional client-side rate limit
 * (`--kube-api-qps`/`--kube-api-burst`). Off by default, as in controller-runtime: the API server's
 * Priority and Fairness protects it, and its 429s are waited out (see throttling.ts).
 */
import {
  type Dispatch,
  type DispatchOptions,
  type Interceptor,
  observingHandler,
} from "./connection-reuse.ts";
import type { TokenBucket } from "./token-bucket.ts";

/** Told about each request: its method, the response code (`<error>` when none came) and the server. */
export type ResponseObserver = (request: { method: string; code: string; host: string }) => void;

function hostOf(options: DispatchOptions): string {
  try {
    return options.origin === undefined ? "" : new URL(String(options.origin)).host;
  } catch {
    return "";
  }
}

/** Counts every response once, when its status line arrives (or its error, if it never does). */
export function countResponses(observe: ResponseObserver): Interceptor {
  return (dispatch: Dispatch) => (options, handler) => {
    const request = { method: options.method.toUpperCase(), host: hostOf(options) };
    let counted = false;
    const count = (code: string) => {
      if (counted) return;
      counted = true;
      try {
        observe({ ...request, code });
      } catch {
        // metrics never break a request
      }
    };
    const counting = observingHandler(handler, {
      onResponseStart: (_controller: unknown, statusCode: number) => {
        if (statusCode >= 200) count(String(statusCode));
      },
      onResponseError: () => count("<error>"),
    });
    return dispatch(options, counting);
  };
}

/** Sends each request only once `bucket` grants a token; `waited` hears how long that took, if at all. */
export function limitRate(
  bucket: TokenBucket,
  waited?: (ms: number, method: string, host: string) => void,
): Interceptor {
  return (dispatch: Dispatch) => (options, handler) => {
    if (bucket.tryTake()) return dispatch(options, handler);
    const since = performance.now();
    void bucket.take().then(() => {
      waited?.(performance.now() - since, options.method.toUpperCase(), hostOf(options));
      try {
        dispatch(options, handler);
      } catch (error) {
        handler.onResponseError?.(null, error as Error);
      }
    });
    return true;
  };
}
