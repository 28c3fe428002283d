/** coordination.k8s.io Leases as plain JSON: what leader election and shard membership both write. */
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { absentIfNotFound, errorMessage } from "../../api/error-message.ts";
import type { Logger } from "../../api/logger.ts";

/** A Lease as plain JSON (client-node's typed Lease writes MicroTime with milliseconds, which the API server rejects). */
export interface Lease {
  readonly apiVersion: "coordination.k8s.io/v1";
  readonly kind: "Lease";
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly resourceVersion?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec?: {
    readonly holderIdentity?: string;
    readonly leaseDurationSeconds?: number;
    readonly acquireTime?: string;
    readonly renewTime?: string;
    readonly leaseTransitions?: number;
  };
}

/** The Lease resource, for CustomObjectsApi calls. */
export const LEASES = { group: "coordination.k8s.io", version: "v1", plural: "leases" } as const;

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** Timings, as controller-runtime defaults them: 15 s lease, 10 s renew deadline, 2 s retry. */
export interface LeaseTiming {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** controller-runtime's defaults. */
export const DEFAULT_LEASE_TIMING: LeaseTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/**
 * When a Lease record was last seen to change, by our own clock: a holder is gone once its record has
 * stayed the same for a whole lease duration as *we* measure it, so clock skew between replicas does not
 * matter (client-go's rule).
 */
export function recordOf(lease: Lease): string {
  const spec = lease.spec ?? {};
  return `${spec.holderIdentity}|${spec.renewTime}|${lease.metadata.resourceVersion}`;
}

/** Reads one Lease; undefined if it does not exist. */
export async function readLease(
  api: CustomObjectsApi,
  namespace: string,
  name: string,
): Promise<Lease | undefined> {
  return absentIfNotFound(
    async () => (await api.getNamespacedCustomObject({ ...LEASES, namespace, name })) as Lease,
  );
}

/** Creates a Lease held by `spec.holderIdentity` from now on (`acquireTime` = `renewTime`, no transitions yet). */
export async function createLease(
  api: CustomObjectsApi,
  metadata: Lease["metadata"],
  spec: {
    readonly holderIdentity: string;
    readonly leaseDurationSeconds: number;
    readonly renewTime: string;
  },
): Promise<Lease> {
  const body: Lease = {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata,
    spec: { ...spec, acquireTime: spec.renewTime, leaseTransitions: 0 },
  };
  return (await api.createNamespacedCustomObject({
    ...LEASES,
    namespace: metadata.namespace,
    body,
  })) as Lease;
}

/** Writes `lease` with the resourceVersion it carries: fails (409) if anyone wrote it in between. */
export async function replaceLease(api: CustomObjectsApi, lease: Lease): Promise<Lease> {
  const { namespace, name } = lease.metadata;
  return (await api.replaceNamespacedCustomObject({ ...LEASES, namespace, name, body: lease })) as Lease;
}

/** Deletes `lease` only as it was read: fails (409) if anyone wrote it since. */
export async function deleteLease(api: CustomObjectsApi, lease: Lease): Promise<void> {
  const { namespace, name, resourceVersion } = lease.metadata;
  await api.deleteNamespacedCustomObject({
    ...LEASES,
    namespace,
    name,
    body: { preconditions: { resourceVersion } },
  });
}

/**
 * Gives a Lease back on the way out (`handBack` says whether there was one to give), so others take over at
 * once; a failure is only logged, since the Lease then expires and others take over all the same.
 */
export async function handBackLease(
  log: Logger,
  messages: { readonly done: string; readonly failed: string },
  handBack: () => Promise<boolean>,
): Promise<void> {
  try {
    if (await handBack()) log.info(messages.done);
  } catch (error) {
    log.warn(messages.failed, { error: errorMessage(error) });
  }
}
