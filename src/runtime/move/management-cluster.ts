/** Reads and writes of the kinds a move carries, on one management cluster (see move-objects.ts). */
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Secret,
} from "@kubernetes/client-node";
import { LABELS } from "../../api/constants.ts";
import { isConflict, isNotFound } from "../../api/error-message.ts";
import { HANDOVER_OWNER_LABEL } from "../../api/move.ts";
import type { MovedKind, MovedObject } from "../../machines/move/plan.ts";

/** Reads and writes of one kind on one management cluster. */
export interface KindClient {
  list(namespaces: readonly string[]): Promise<MovedObject[]>;
  /** The object of that name, or undefined. */
  get(object: MovedObject): Promise<MovedObject | undefined>;
  /** Creates it; one that exists meanwhile is read instead. */
  create(object: MovedObject): Promise<MovedObject>;
  replace(object: MovedObject): Promise<MovedObject>;
  replaceStatus(object: MovedObject): Promise<void>;
  /** A JSON merge patch (null removes a field). */
  merge(object: MovedObject, patch: object): Promise<void>;
  /** Deletes it; gone already is fine. */
  remove(object: MovedObject): Promise<void>;
}

export interface Side {
  readonly custom: CustomObjectsApi;
  of(kind: MovedKind): KindClient;
  /** Creates those of the namespaces that do not exist. */
  ensureNamespaces(names: ReadonlySet<string>): Promise<void>;
}

const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/** The clients of one management cluster. */
export function sides(kubeConfig: KubeConfig): Side {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const absentIfGone = async <T>(call: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await call();
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };
  const secrets: KindClient = {
    async list(namespaces) {
      const selectors = [LABELS.accessRequestUid, HANDOVER_OWNER_LABEL];
      const lists = await Promise.all(
        selectors.flatMap((labelSelector) =>
          namespaces.length === 0
            ? [core.listSecretForAllNamespaces({ labelSelector })]
            : namespaces.map((namespace) => core.listNamespacedSecret({ namespace, labelSelector })),
        ),
      );
      return lists.flatMap((list) => list.items as MovedObject[]);
    },
    get: (object) =>
      absentIfGone(
        async () =>
          (await core.readNamespacedSecret({
            namespace: object.metadata.namespace ?? "",
            name: object.metadata.name ?? "",
          })) as MovedObject,
      ),
    async create(object) {
      const namespace = object.metadata.namespace ?? "";
      try {
        return (await core.createNamespacedSecret({ namespace, body: object as V1Secret })) as MovedObject;
      } catch (error) {
        if (!isConflict(error)) throw error;
        return (await core.readNamespacedSecret({
          namespace,
          name: object.metadata.name ?? "",
        })) as MovedObject;
      }
    },
    replace: async (object) =>
      (await core.replaceNamespacedSecret({
        namespace: object.metadata.namespace ?? "",
        name: object.metadata.name ?? "",
        body: object as V1Secret,
      })) as MovedObject,
    async replaceStatus() {},
    async merge(object, patch) {
      await absentIfGone(() =>
        core.patchNamespacedSecret(
          { namespace: object.metadata.namespace ?? "", name: object.metadata.name ?? "", body: patch },
          merge,
        ),
      );
    },
    async remove(object) {
      await absentIfGone(() =>
        core.deleteNamespacedSecret({
          namespace: object.metadata.namespace ?? "",
          name: object.metadata.name ?? "",
        }),
      );
    },
  };
  const customOf = (kind: MovedKind): KindClient => {
    const resource = { group: kind.group, version: kind.version, plural: kind.plural };
    /** The object's name, and its namespace for a namespaced kind. */
    const at = (object: MovedObject) => ({
      ...resource,
      name: object.metadata.name ?? "",
      namespace: kind.namespaced ? (object.metadata.namespace ?? "") : undefined,
    });
    const get = (object: MovedObject) =>
      absentIfGone(async () => {
        const { namespace, ...where } = at(object);
        return (
          namespace !== undefined
            ? await custom.getNamespacedCustomObject({ ...where, namespace })
            : await custom.getClusterCustomObject(where)
        ) as MovedObject;
      });
    return {
      async list(namespaces) {
        const lists =
          kind.namespaced && namespaces.length > 0
            ? await Promise.all(
                namespaces.map((namespace) => custom.listNamespacedCustomObject({ ...resource, namespace })),
              )
            : [await custom.listClusterCustomObject(resource)];
        return lists.flatMap((list) => (list as { items: MovedObject[] }).items);
      },
      get,
      async create(object) {
        const { namespace } = at(object);
        const body = { ...object, apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind };
        try {
          return (
            namespace !== undefined
              ? await custom.createNamespacedCustomObject({ ...resource, namespace, body })
              : await custom.createClusterCustomObject({ ...resource, body })
          ) as MovedObject;
        } catch (error) {
          if (!isConflict(error)) throw error;
          const existing = await get(object);
          if (!existing) throw error;
          return existing;
        }
      },
      async replace(object) {
        const { namespace, ...where } = at(object);
        const body = { ...object, apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind };
        return (
          namespace !== undefined
            ? await custom.replaceNamespacedCustomObject({ ...where, namespace, body })
            : await custom.replaceClusterCustomObject({ ...where, body })
        ) as MovedObject;
      },
      async replaceStatus(object) {
        const { namespace, ...where } = at(object);
        const body = object as object;
        if (namespace !== undefined)
          await custom.replaceNamespacedCustomObjectStatus({ ...where, namespace, body });
        else await custom.replaceClusterCustomObjectStatus({ ...where, body });
      },
      async merge(object, patch) {
        const { namespace, ...where } = at(object);
        await absentIfGone(() =>
          namespace !== undefined
            ? custom.patchNamespacedCustomObject({ ...where, namespace, body: patch }, merge)
            : custom.patchClusterCustomObject({ ...where, body: patch }, merge),
        );
      },
      async remove(object) {
        const { namespace, ...where } = at(object);
        await absentIfGone(() =>
          namespace !== undefined
            ? custom.deleteNamespacedCustomObject({ ...where, namespace })
            : custom.deleteClusterCustomObject(where),
        );
      },
    };
  };
  return {
    custom,
    of: (kind) => (kind.kind === "Secret" ? secrets : customOf(kind)),
    async ensureNamespaces(names) {
      for (const name of names) {
        try {
          await core.createNamespace({ body: { metadata: { name } } });
        } catch (error) {
          if (!isConflict(error)) throw error;
        }
      }
    },
  };
}
