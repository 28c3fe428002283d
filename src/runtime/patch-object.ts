/** Applies a JSON patch to an object or its status, guarded by a test on resourceVersion: never a lost update. */
import { ApiException, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { PatchOperation } from "../machines/json-patch.ts";
import { Patch } from "../machines/json-patch.ts";
import { FIELD_MANAGER } from "./install-crds.ts";

/** Which object to patch. */
export interface PatchTarget {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** Absent for cluster-scoped kinds. */
  readonly namespace?: string;
  readonly name: string;
  /** The resourceVersion the operations were computed against. */
  readonly resourceVersion: string;
}

/** The object changed since it was read (409, or the resourceVersion test failed): re-read and try again. */
export class ConflictError extends Error {
  override readonly name = "ConflictError";
}

/** The object no longer exists (404): nothing to patch. */
export class GoneError extends Error {
  override readonly name = "GoneError";
}

/**
 * Sends `operations` as an RFC 6902 patch, prefixed with `test /metadata/resourceVersion`, to the object
 * (`subresource` undefined) or its status subresource. Returns the object as the API server stored it.
 *
 * Guarantees: the patch applies to exactly the version it was computed from, or not at all
 * ({@link ConflictError}); an empty operation list sends nothing and returns undefined.
 */
export async function patchObject(
  kubeConfig: KubeConfig,
  target: PatchTarget,
  operations: readonly PatchOperation[],
  subresource?: "status",
): Promise<Record<string, unknown> | undefined> {
  if (operations.length === 0) return undefined;
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const body = [Patch.test(["metadata", "resourceVersion"], target.resourceVersion), ...operations];
  const common = {
    group: target.group,
    version: target.version,
    plural: target.plural,
    name: target.name,
    body,
  };
  try {
    if (target.namespace) {
      const request = { ...common, namespace: target.namespace, fieldManager: FIELD_MANAGER };
      return subresource === "status"
        ? await api.patchNamespacedCustomObjectStatus(request)
        : await api.patchNamespacedCustomObject(request);
    }
    const request = { ...common, fieldManager: FIELD_MANAGER };
    return subresource === "status"
      ? await api.patchClusterCustomObjectStatus(request)
      : await api.patchClusterCustomObject(request);
  } catch (error) {
    throw classifyPatchError(error, target);
  }
}

/** Maps API errors of a guarded patch to {@link ConflictError}, {@link GoneError} or the error itself. */
export function classifyPatchError(error: unknown, target: PatchTarget): unknown {
  if (!(error instanceof ApiException)) return error;
  const what = `${target.plural}/${target.namespace ? `${target.namespace}/` : ""}${target.name}`;
  const body = typeof error.body === "string" ? error.body : JSON.stringify(error.body ?? "");
  if (error.code === 404) return new GoneError(`${what} no longer exists`, { cause: error });
  if (error.code === 409 || (error.code === 422 && /test operation|testing value/i.test(body))) {
    return new ConflictError(`${what} changed since resourceVersion ${target.resourceVersion}; re-reading`, {
      cause: error,
    });
  }
  return error;
}
