/**
 * Errors as a person reads them: a failed Kubernetes API call is its Status (`404 NotFound: …`), never
 * the client's dump of the HTTP exchange with its headers. Shared by the runtime and the backends.
 */

/** What the API server said about a failed call (the Kubernetes `Status` object, in brief). */
export interface ApiStatus {
  /** HTTP status code, e.g. 404. */
  readonly code: number;
  /** The Status reason, e.g. `NotFound`, `Conflict`, `Invalid`; absent when the body was not a Status. */
  readonly reason?: string;
  /** The Status message, e.g. `clusters.clusters.openmcp.cloud "x" not found`. */
  readonly message?: string;
}

/** How @kubernetes/client-node's ApiException looks (its message holds the whole response, headers included). */
interface ApiExceptionLike {
  readonly code: number;
  readonly body?: unknown;
}

function isApiException(error: unknown): error is Error & ApiExceptionLike {
  return error instanceof Error && typeof (error as { code?: unknown }).code === "number" && "body" in error;
}

/** The first of `error` and its causes (ten deep at most) that `test` accepts; undefined when none does. */
export function findCause<T>(error: unknown, test: (candidate: unknown) => candidate is T): T | undefined {
  for (let current = error, depth = 0; current !== undefined && depth < 10; depth++) {
    if (test(current)) return current;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

/** The Status of the first failed API call in `error` or its causes; undefined when there is none. */
export function apiStatusOf(error: unknown): ApiStatus | undefined {
  const failed = findCause(error, isApiException);
  return failed && statusFrom(failed);
}

function statusFrom(error: ApiExceptionLike): ApiStatus {
  let body = error.body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {
      body = undefined;
    }
  }
  const status = (body ?? {}) as { kind?: unknown; reason?: unknown; message?: unknown };
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  const reason = text(status.reason);
  const message = text(status.message);
  return { code: error.code, ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

/** `404 NotFound: clusters.clusters.openmcp.cloud "x" not found`, or `HTTP 503` without a Status body. */
export function formatApiStatus(status: ApiStatus): string {
  const head = status.reason ? `${status.code} ${status.reason}` : `HTTP ${status.code}`;
  return status.message ? `${head}: ${status.message}` : head;
}

/**
 * The message of an error, for a log field, a condition or an Event: short, and without headers. The causes
 * that are not API calls follow it (`fetch failed: connect ECONNREFUSED 127.0.0.1:6443`), each with its
 * system code (`(ERR_TLS_CERT_ALTNAME_INVALID)`) unless the text says it already: a failed connection
 * names its cause, never a bare `fetch failed`. A cause whose words the text already holds is not repeated.
 */
export function errorMessage(error: unknown): string {
  if (isApiException(error)) return formatApiStatus(statusFrom(error));
  let text = error instanceof Error ? error.message : String(error);
  let current = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; current instanceof Error && depth < 10; depth++, current = current.cause) {
    if (isApiException(current)) continue; // our own wrapper already says what the API server said
    if (current.message !== "" && !text.includes(current.message)) text += `: ${current.message}`;
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code !== "" && !text.includes(code)) text += ` (${code})`;
  }
  return text;
}

/** The failed call (or one of its causes) was answered 404: the object does not exist. */
export function isNotFound(error: unknown): boolean {
  return apiStatusOf(error)?.code === 404;
}

/** What `call` resolves to; undefined where it was answered 404 (the object does not exist). Any other failure is thrown. */
export async function absentIfNotFound<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** The failed call (or one of its causes) was answered 409: a conflict on resourceVersion or an existing name. */
export function isConflict(error: unknown): boolean {
  return apiStatusOf(error)?.code === 409;
}
