/** Applies a JSON patch to an object or its status, guarded by a test on resourceVersion: never a lost update. */
import { ApiException, CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { errorMessage, isConflict, isNotFound } from "../../api/error-message.ts";
import { objectKey, referenceKey } from "../../api/object-key.ts";
import { diff, type Json, Patch, type PatchOperation } from "../../machines/shared/json-patch.ts";
import { ConflictError, GoneError, TerminalError } from "../controllers/errors.ts";
import { enterWrite } from "../controllers/write-loop-guard.ts";
import { FIELD_MANAGER } from "./server-side-apply.ts";

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
  /** The object's uid, for the Warning Event if the write-loop guard finds it written in a loop. */
  readonly uid?: string;
}

/**
 * Sends `operations` as an RFC 6902 patch, prefixed with `test /metadata/resourceVersion`, to the object
 * (`subresource` undefined) or its status subresource. Returns the object as the API server stored it.
 *
 * Guarantees: the patch applies to exactly the version it was computed from, or not at all
 * ({@link ConflictError}); an empty operation list sends nothing and returns undefined; every patch sent
 * passes the engine's write-loop guard first, which may refuse it (a `WriteLoopError`).
 */
export async function patchObject(
  kubeConfig: KubeConfig,
  target: PatchTarget,
  operations: readonly PatchOperation[],
  subresource?: "status",
): Promise<Record<string, unknown> | undefined> {
  if (operations.length === 0) return undefined;
  enterWrite(kubeConfig, target);
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
    throw await classifyPatchError(error, target, () => currentResourceVersion(api, target));
  }
}

/** Which object to delete: the one of `uid` only (another made under its name since stays). */
export interface RemoveTarget {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespace?: string;
  readonly name: string;
  readonly uid: string;
}

/**
 * Deletes the object `target` names (a core-group Secret or one of our custom resources), with a uid
 * precondition. Resolves once it is gone: deleted now, gone already, or replaced by another of its name.
 */
export async function removeObject(kubeConfig: KubeConfig, target: RemoveTarget): Promise<void> {
  enterWrite(kubeConfig, target);
  const body = { preconditions: { uid: target.uid } };
  const namespace = target.namespace ?? "";
  try {
    if (target.group === "" && target.plural === "secrets") {
      await kubeConfig
        .makeApiClient(CoreV1Api)
        .deleteNamespacedSecret({ namespace, name: target.name, body });
    } else {
      const api = kubeConfig.makeApiClient(CustomObjectsApi);
      const common = {
        group: target.group,
        version: target.version,
        plural: target.plural,
        name: target.name,
      };
      if (target.namespace) await api.deleteNamespacedCustomObject({ ...common, namespace, body });
      else await api.deleteClusterCustomObject({ ...common, body });
    }
  } catch (error) {
    // Not found, or (409) another object of that name: the one meant is gone either way.
    if (!isNotFound(error) && !isConflict(error)) throw error;
  }
}

/** The metadata fields a machine may change; the rest of metadata belongs to the API server and users. */
const WRITABLE_METADATA = ["finalizers", "labels", "annotations"] as const;

/** A part of an object a step writes: its writable metadata, the spec fields it names, or its status. */
export type ObjectPart = "metadata" | "spec" | "status";

/**
 * The operations that turn one part of `stored` into `desired`: for metadata only its writable fields,
 * for the spec only the fields `desired` names.
 */
export function changesTo(
  stored: { readonly metadata?: object; readonly spec?: unknown; readonly status?: unknown },
  part: ObjectPart,
  desired: unknown,
): PatchOperation[] {
  if (desired === undefined) return []; // a step that desires nothing of this part leaves it alone
  if (part === "spec") {
    const fields = Object.keys(desired as object);
    const current = (stored.spec ?? {}) as Record<string, Json>;
    const owned = Object.fromEntries(
      fields.flatMap((field) => (field in current ? [[field, current[field]]] : [])),
    );
    return diff({ spec: owned as Json }, { spec: desired as Json });
  }
  if (part === "status") {
    return diff(stored.status === undefined ? {} : { status: stored.status as Json }, {
      status: desired as Json,
    });
  }
  const writable = (metadata: object | undefined) =>
    Object.fromEntries(
      WRITABLE_METADATA.flatMap((field) => {
        const value = (metadata as Record<string, unknown> | undefined)?.[field];
        return value === undefined ? [] : [[field, value as Json]];
      }),
    );
  return diff({ metadata: writable(stored.metadata) }, { metadata: writable(desired as object) });
}

/** What {@link writeDesired} wrote. */
export interface Written<T> {
  readonly object: T;
  readonly key: string;
  readonly paths: readonly string[];
}

/**
 * Writes the difference between one part of `stored` and `desired` as one guarded patch (the status
 * through its subresource); undefined when they are equal, so nothing is sent.
 */
export async function writeDesired<
  T extends {
    readonly metadata: {
      readonly name?: string;
      readonly namespace?: string;
      readonly resourceVersion?: string;
      readonly uid?: string;
    };
  },
>(
  kubeConfig: KubeConfig,
  resource: { readonly group: string; readonly version: string; readonly plural: string },
  stored: T,
  part: ObjectPart,
  desired: unknown,
): Promise<Written<T> | undefined> {
  const operations = changesTo(stored, part, desired);
  const { namespace, name = "", resourceVersion = "", uid } = stored.metadata;
  const object = await patchObject(
    kubeConfig,
    { ...resource, ...(namespace ? { namespace } : {}), name, resourceVersion, ...(uid ? { uid } : {}) },
    operations,
    part === "status" ? "status" : undefined,
  );
  if (!object) return undefined;
  return {
    object: object as unknown as T,
    key: objectKey(stored),
    paths: operations.map((operation) => operation.path),
  };
}

async function currentResourceVersion(
  api: CustomObjectsApi,
  target: PatchTarget,
): Promise<string | undefined> {
  const common = { group: target.group, version: target.version, plural: target.plural, name: target.name };
  const object = (
    target.namespace
      ? await api.getNamespacedCustomObject({ ...common, namespace: target.namespace })
      : await api.getClusterCustomObject(common)
  ) as { metadata?: { resourceVersion?: string } };
  return object.metadata?.resourceVersion;
}

/**
 * Maps API errors of a guarded patch to {@link ConflictError}, {@link GoneError}, a {@link TerminalError}
 * (422 Invalid with field causes: the object as the step wants it fails the CRD's validation, and the
 * same step on the same object will want it again, so retrying cannot help) or the error itself.
 *
 * Caveat: a failed `test` operation comes back as a bare 422 ("the server rejected our request…")
 * without details, like other malformed patches; it is a conflict only if the object's resourceVersion
 * has moved on, so that case is settled by reading it (`readResourceVersion`), once, on failure only.
 */
export async function classifyPatchError(
  error: unknown,
  target: PatchTarget,
  readResourceVersion: () => Promise<string | undefined>,
): Promise<unknown> {
  if (!(error instanceof ApiException)) return error;
  const what = `${target.plural}/${referenceKey(target)}`;
  const conflict = () =>
    new ConflictError(`${what} changed since resourceVersion ${target.resourceVersion}; re-reading`, {
      cause: error,
    });
  if (isNotFound(error)) return new GoneError(`${what} no longer exists`, { cause: error });
  if (isConflict(error)) return conflict();
  if (error.code === 422 && hasCauses(error.body)) {
    return new TerminalError(
      `${what} was refused as invalid (${errorMessage(error)}); not retrying until the object changes`,
      { cause: error },
    );
  }
  if (error.code === 422) {
    try {
      const current = await readResourceVersion();
      if (current !== target.resourceVersion) return conflict();
    } catch (readError) {
      if (isNotFound(readError)) {
        return new GoneError(`${what} no longer exists`, { cause: error });
      }
    }
  }
  return error;
}

/** Whether a Status body names field causes (a validation failure, never a failed test operation). */
function hasCauses(body: unknown): boolean {
  try {
    const status = (typeof body === "string" ? JSON.parse(body) : body) as {
      details?: { causes?: unknown[] };
    };
    return (status?.details?.causes?.length ?? 0) > 0;
  } catch {
    return false;
  }
}
