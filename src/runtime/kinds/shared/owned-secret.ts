/** Secrets the engine makes for one object: created or replaced only while they carry that object's label, deleted likewise. */
import { CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import { isConflict, isNotFound } from "../../../api/error-message.ts";

/** The label that says which object a Secret was made for: `[key, value]`. */
export type OwnerLabel = readonly [key: string, value: string];

/** The annotation naming the data keys the engine wrote last, so that a key it no longer writes goes and no other does. */
export const ENGINE_KEYS_ANNOTATION = "engine.openmcp.cloud/secret-keys";

/**
 * The Secret to replace `existing` with: `desired`'s keys and metadata, and everything others added to the
 * Secret kept — data keys the engine did not write last time (e.g. `token` and `mounted-kubeconfig` of an account
 * runtime renewing the kubeconfig), labels, annotations, finalizers and owner references of their own. A key the
 * engine wrote last time and writes no more goes. Pure.
 */
export function mergedSecret(existing: V1Secret, desired: V1Secret): V1Secret {
  const ours = Object.keys({ ...desired.data, ...desired.stringData });
  const before = (existing.metadata?.annotations?.[ENGINE_KEYS_ANNOTATION] ?? "").split(",").filter(Boolean);
  const theirs = Object.fromEntries(
    Object.entries(existing.data ?? {}).filter(([key]) => !ours.includes(key) && !before.includes(key)),
  );
  const owners = desired.metadata?.ownerReferences ?? [];
  const otherOwners = (existing.metadata?.ownerReferences ?? []).filter(
    (reference) => !owners.some((own) => own.uid === reference.uid),
  );
  const finalizers = existing.metadata?.finalizers ?? [];
  return {
    ...desired,
    data: { ...theirs, ...desired.data },
    metadata: {
      ...desired.metadata,
      labels: { ...existing.metadata?.labels, ...desired.metadata?.labels },
      annotations: {
        ...existing.metadata?.annotations,
        ...desired.metadata?.annotations,
        [ENGINE_KEYS_ANNOTATION]: [...ours].sort().join(","),
      },
      ...(finalizers.length > 0 ? { finalizers } : {}),
      ...(owners.length + otherOwners.length > 0 ? { ownerReferences: [...owners, ...otherOwners] } : {}),
      resourceVersion: existing.metadata?.resourceVersion,
    },
  };
}

/**
 * Creates `body` (its metadata carries name, namespace and `owner` among its labels) or replaces the
 * Secret of that name if it carries the same label, keeping what others added to it ({@link mergedSecret}).
 * A Secret someone else made is never overwritten: that is an error naming it, `what` saying what the engine
 * wanted it for.
 */
export async function writeOwnedSecret(
  kubeConfig: KubeConfig,
  body: V1Secret,
  owner: OwnerLabel,
  what: string,
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const namespace = body.metadata?.namespace ?? "";
  const name = body.metadata?.name ?? "";
  const keys = Object.keys({ ...body.data, ...body.stringData })
    .sort()
    .join(",");
  const annotated: V1Secret = {
    ...body,
    metadata: {
      ...body.metadata,
      annotations: { ...body.metadata?.annotations, [ENGINE_KEYS_ANNOTATION]: keys },
    },
  };
  try {
    await core.createNamespacedSecret({ namespace, body: annotated });
  } catch (error) {
    if (!isConflict(error)) throw error;
    const existing = await core.readNamespacedSecret({ namespace, name });
    if (existing.metadata?.labels?.[owner[0]] !== owner[1]) {
      throw new Error(`Secret ${namespace}/${name} exists and was not made for ${what}; not overwriting it`);
    }
    // A conflict (someone wrote it meanwhile) is retried by the caller's error policy, reading it again.
    await core.replaceNamespacedSecret({ namespace, name, body: mergedSecret(existing, body) });
  }
}

/** Deletes the Secret if it carries `owner`; gone already is fine, someone else's is left alone. */
export async function deleteOwnedSecret(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
  owner: OwnerLabel,
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  try {
    const existing = await core.readNamespacedSecret({ namespace, name });
    if (existing.metadata?.labels?.[owner[0]] !== owner[1]) return;
    await core.deleteNamespacedSecret({ namespace, name });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
