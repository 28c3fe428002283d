/** Secrets the engine makes for one object: created or replaced only while they carry that object's label, deleted likewise. */
import { CoreV1Api, type KubeConfig, type V1Secret } from "@kubernetes/client-node";
import { isConflict, isNotFound } from "../../../api/error-message.ts";

/** The label that says which object a Secret was made for: `[key, value]`. */
export type OwnerLabel = readonly [key: string, value: string];

/**
 * Creates `body` (its metadata carries name, namespace and `owner` among its labels) or replaces the
 * Secret of that name if it carries the same label. A Secret someone else made is never overwritten:
 * that is an error naming it, `what` saying what the engine wanted it for.
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
  try {
    await core.createNamespacedSecret({ namespace, body });
  } catch (error) {
    if (!isConflict(error)) throw error;
    const existing = await core.readNamespacedSecret({ namespace, name });
    if (existing.metadata?.labels?.[owner[0]] !== owner[1]) {
      throw new Error(`Secret ${namespace}/${name} exists and was not made for ${what}; not overwriting it`);
    }
    await core.replaceNamespacedSecret({
      namespace,
      name,
      body: {
        ...body,
        data: {},
        metadata: { ...body.metadata, resourceVersion: existing.metadata?.resourceVersion },
      },
    });
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
