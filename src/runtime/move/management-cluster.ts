/** Reads and writes of the kinds a move carries, on one management cluster (see move-objects.ts). */
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Secret,
} from "@kubernetes/client-node";
import { ACCESS_REQUEST_LABELS } from "../../api/constants/access-request.ts";
import { absentIfNotFound, isConflict } from "../../api/error-message.ts";
import { HANDOVER_OWNER_LABEL } from "../../api/move.ts";
import type { MovedKind, MovedObject } from "../../machines/move/plan.ts";
import { reuseConnections } from "../api-server/connection-reuse.ts";

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

/**
 * The clients of one management cluster; their requests share one TLS connection pool (client-node's own way, a new
 * connection per request, cost a move of 20 Clusters and its reruns about 3,900 handshakes in move.test.ts).
 */
export function sides(kubeConfig: KubeConfig): Side {
  reuseConnections(kubeConfig);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const secrets = new SecretClient(core);
  return {
    custom,
    of: (kind) => (kind.kind === "Secret" ? secrets : new CustomKindClient(custom, kind)),
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

/** The object's namespace and name, for the core API's namespaced calls. */
const secretAt = (object: MovedObject) => ({
  namespace: object.metadata.namespace ?? "",
  name: object.metadata.name ?? "",
});

/** The Secrets a move carries: those of AccessRequests and those handed over with a Cluster. Secrets have no status. */
class SecretClient implements KindClient {
  readonly #core: CoreV1Api;

  constructor(core: CoreV1Api) {
    this.#core = core;
  }

  async list(namespaces: readonly string[]): Promise<MovedObject[]> {
    const selectors = [ACCESS_REQUEST_LABELS.accessRequestUid, HANDOVER_OWNER_LABEL];
    const lists = await Promise.all(
      selectors.flatMap((labelSelector) =>
        namespaces.length === 0
          ? [this.#core.listSecretForAllNamespaces({ labelSelector })]
          : namespaces.map((namespace) => this.#core.listNamespacedSecret({ namespace, labelSelector })),
      ),
    );
    return lists.flatMap((list) => list.items as MovedObject[]);
  }

  get(object: MovedObject): Promise<MovedObject | undefined> {
    return absentIfNotFound(
      async () => (await this.#core.readNamespacedSecret(secretAt(object))) as MovedObject,
    );
  }

  async create(object: MovedObject): Promise<MovedObject> {
    const namespace = object.metadata.namespace ?? "";
    try {
      return (await this.#core.createNamespacedSecret({
        namespace,
        body: object as V1Secret,
      })) as MovedObject;
    } catch (error) {
      if (!isConflict(error)) throw error;
      return (await this.#core.readNamespacedSecret(secretAt(object))) as MovedObject;
    }
  }

  async replace(object: MovedObject): Promise<MovedObject> {
    const body = object as V1Secret;
    return (await this.#core.replaceNamespacedSecret({ ...secretAt(object), body })) as MovedObject;
  }

  async replaceStatus(): Promise<void> {}

  async merge(object: MovedObject, patch: object): Promise<void> {
    await absentIfNotFound(() =>
      this.#core.patchNamespacedSecret({ ...secretAt(object), body: patch }, merge),
    );
  }

  async remove(object: MovedObject): Promise<void> {
    await absentIfNotFound(() => this.#core.deleteNamespacedSecret(secretAt(object)));
  }
}

/** A custom resource kind a move carries, namespaced or cluster-wide. */
class CustomKindClient implements KindClient {
  readonly #custom: CustomObjectsApi;
  readonly #kind: MovedKind;
  readonly #resource: { group: string; version: string; plural: string };

  constructor(custom: CustomObjectsApi, kind: MovedKind) {
    this.#custom = custom;
    this.#kind = kind;
    this.#resource = { group: kind.group, version: kind.version, plural: kind.plural };
  }

  async list(namespaces: readonly string[]): Promise<MovedObject[]> {
    const resource = this.#resource;
    const lists =
      this.#kind.namespaced && namespaces.length > 0
        ? await Promise.all(
            namespaces.map((namespace) =>
              this.#custom.listNamespacedCustomObject({ ...resource, namespace }),
            ),
          )
        : [await this.#custom.listClusterCustomObject(resource)];
    return lists.flatMap((list) => (list as { items: MovedObject[] }).items);
  }

  get(object: MovedObject): Promise<MovedObject | undefined> {
    return absentIfNotFound(async () => {
      const { namespace, ...where } = this.#at(object);
      return (
        namespace !== undefined
          ? await this.#custom.getNamespacedCustomObject({ ...where, namespace })
          : await this.#custom.getClusterCustomObject(where)
      ) as MovedObject;
    });
  }

  async create(object: MovedObject): Promise<MovedObject> {
    const { namespace } = this.#at(object);
    const resource = this.#resource;
    const body = this.#body(object);
    try {
      return (
        namespace !== undefined
          ? await this.#custom.createNamespacedCustomObject({ ...resource, namespace, body })
          : await this.#custom.createClusterCustomObject({ ...resource, body })
      ) as MovedObject;
    } catch (error) {
      if (!isConflict(error)) throw error;
      const existing = await this.get(object);
      if (!existing) throw error;
      return existing;
    }
  }

  async replace(object: MovedObject): Promise<MovedObject> {
    const { namespace, ...where } = this.#at(object);
    const body = this.#body(object);
    return (
      namespace !== undefined
        ? await this.#custom.replaceNamespacedCustomObject({ ...where, namespace, body })
        : await this.#custom.replaceClusterCustomObject({ ...where, body })
    ) as MovedObject;
  }

  async replaceStatus(object: MovedObject): Promise<void> {
    const { namespace, ...where } = this.#at(object);
    const body = object as object;
    if (namespace !== undefined)
      await this.#custom.replaceNamespacedCustomObjectStatus({ ...where, namespace, body });
    else await this.#custom.replaceClusterCustomObjectStatus({ ...where, body });
  }

  async merge(object: MovedObject, patch: object): Promise<void> {
    const { namespace, ...where } = this.#at(object);
    await absentIfNotFound(() =>
      namespace !== undefined
        ? this.#custom.patchNamespacedCustomObject({ ...where, namespace, body: patch }, merge)
        : this.#custom.patchClusterCustomObject({ ...where, body: patch }, merge),
    );
  }

  async remove(object: MovedObject): Promise<void> {
    const { namespace, ...where } = this.#at(object);
    await absentIfNotFound(() =>
      namespace !== undefined
        ? this.#custom.deleteNamespacedCustomObject({ ...where, namespace })
        : this.#custom.deleteClusterCustomObject(where),
    );
  }

  /** The object's name, and its namespace for a namespaced kind. */
  #at(object: MovedObject) {
    return {
      ...this.#resource,
      name: object.metadata.name ?? "",
      namespace: this.#kind.namespaced ? (object.metadata.namespace ?? "") : undefined,
    };
  }

  /** The object as the API server takes it: with the kind's apiVersion and kind. */
  #body(object: MovedObject) {
    return { ...object, apiVersion: `${this.#kind.group}/${this.#kind.version}`, kind: this.#kind.kind };
  }
}
