/** Prepares AccessRequests for their provider (labels, clusterRef), expires them by ttl, and resets changed grants. */

import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import type { AccessRequest } from "../../../api/access-request.ts";
import type { Cluster } from "../../../api/cluster.ts";
import type { ClusterProfile } from "../../../api/cluster-profile.ts";
import type { ClusterRequestStatus } from "../../../api/cluster-request.ts";
import type { ObjectReference } from "../../../api/common.ts";
import { REQUEST_PHASES, RESOURCES } from "../../../api/constants.ts";
import { isNotFound } from "../../../api/error-message.ts";
import { isPaused } from "../../../api/move.ts";
import { referenceKey } from "../../../api/object-key.ts";
import { prepareAccessRequest, type Resolution } from "../../../machines/access-request/preparation.ts";
import { patchObject } from "../../api-server/patch-object.ts";
import { GoneError } from "../../controllers/errors.ts";
import { KeyedController, type KeyedControllerSettings } from "../../controllers/keyed-controller.ts";
import { Outcome } from "../../controllers/outcome.ts";
import type { Informer } from "../../informer.ts";
import type { InformerSet } from "../../informers.ts";
import { CLUSTER_CACHES } from "../cluster/caches.ts";
import { PROFILE_CACHES } from "../provider-config/caches.ts";
import { ACCESS_REQUEST_CACHES } from "./caches.ts";
import { accessRequestShardKey } from "./shard-key.ts";

/** How to run preparation. */
export interface AccessPreparationOptions extends KeyedControllerSettings {
  readonly kubeConfig: KubeConfig;
  readonly informers: InformerSet;
  /** Retry of unresolved references. Default 10 s. */
  readonly retryMs?: number;
}

/** The generic controller every provider's AccessRequests go through first (switch off beside the openMCP operator). */
export class AccessPreparationController extends KeyedController {
  readonly #options: AccessPreparationOptions;
  /** The caches it reads, declared when it is made (before the caches start). */
  readonly #requests: Informer<AccessRequest>;
  readonly #clusters: Informer<Cluster>;
  readonly #profiles: Informer<ClusterProfile>;
  readonly #api: CustomObjectsApi;

  constructor(options: AccessPreparationOptions) {
    super({ ...options, name: "accessrequest-preparation" });
    this.#options = options;
    this.#requests = options.informers.of(ACCESS_REQUEST_CACHES.accessRequests);
    this.#clusters = options.informers.of(CLUSTER_CACHES.clusters);
    this.#profiles = options.informers.of(PROFILE_CACHES.profiles);
    this.#api = options.kubeConfig.makeApiClient(CustomObjectsApi);
  }

  watch(): void {
    this.#requests.on((event) => this.queue.add(event.key));
  }

  keys(): Iterable<string> {
    return this.#requests.keys();
  }

  /** The same owner as the AccessRequest's machine. */
  override shardKeyOf(key: string): string {
    const request = this.#requests.get(key);
    return request ? accessRequestShardKey(request) : key;
  }

  async reconcile(key: string): Promise<Outcome> {
    const request = this.#requests.get(key);
    // A paused request (moving between management clusters) is left as it is: no label, no expiry.
    if (!request || request.metadata.deletionTimestamp || isPaused(request)) return Outcome.awaitChange();
    const resolution = await this.#resolve(request);
    const result = prepareAccessRequest(
      request,
      resolution,
      this.clock.now(),
      this.#options.retryMs ?? 10_000,
    );
    const target = {
      ...RESOURCES.AccessRequest,
      namespace: request.metadata.namespace ?? "",
      name: request.metadata.name ?? "",
    };
    try {
      if (result.expired) {
        this.log.info("ttl passed; deleting the AccessRequest", { key });
        await this.#api.deleteNamespacedCustomObject(target);
        return Outcome.awaitChange();
      }
      let stored = request;
      const patched = await patchObject(
        this.#options.kubeConfig,
        { ...target, resourceVersion: stored.metadata.resourceVersion ?? "" },
        result.objectPatch,
      );
      if (patched) stored = patched as unknown as AccessRequest;
      await patchObject(
        this.#options.kubeConfig,
        { ...target, resourceVersion: stored.metadata.resourceVersion ?? "" },
        result.statusPatch,
        "status",
      );
    } catch (error) {
      if (error instanceof GoneError || isNotFound(error)) return Outcome.awaitChange();
      throw error;
    }
    return result.requeueAfterMs === undefined
      ? Outcome.awaitChange()
      : Outcome.requeueAfter(result.requeueAfterMs);
  }

  #resolve(request: AccessRequest): Promise<Resolution> {
    return resolveAccessTarget(request, {
      cluster: (key) => this.#clusters.get(key),
      profile: (name) => this.#profiles.get(name),
      clusterRequest: async (ref) => {
        try {
          return (await this.#api.getNamespacedCustomObject({ ...RESOURCES.ClusterRequest, ...ref })) as {
            status?: ClusterRequestStatus;
          };
        } catch (error) {
          if (isNotFound(error)) return undefined;
          throw error;
        }
      },
    });
  }
}

/** Where {@link resolveAccessTarget} looks (read-only): the caches, and a ClusterRequest (undefined: none). */
export interface AccessTargetLookups {
  cluster(key: string): Cluster | undefined;
  profile(name: string): ClusterProfile | undefined;
  clusterRequest(ref: ObjectReference): Promise<{ readonly status?: ClusterRequestStatus } | undefined>;
}

/**
 * An AccessRequest's target for preparation: clusterRef, or requestRef → a Granted ClusterRequest → its
 * status.cluster; then the Cluster → its profile (shared by the preparation controller and `plan`).
 */
export async function resolveAccessTarget(
  request: AccessRequest,
  lookups: AccessTargetLookups,
): Promise<Resolution> {
  let cluster: ObjectReference | undefined = request.spec.clusterRef;
  if (!cluster) {
    const ref = request.spec.requestRef;
    if (!ref) return { kind: "unresolved", message: "neither spec.clusterRef nor spec.requestRef is set" };
    const found = await lookups.clusterRequest(ref);
    if (!found) {
      return { kind: "unresolved", message: `ClusterRequest ${ref.namespace}/${ref.name} does not exist` };
    }
    const status = found.status;
    if (status?.phase !== REQUEST_PHASES.granted || !status.cluster) {
      return {
        kind: "unresolved",
        message: `ClusterRequest ${ref.namespace}/${ref.name} is not Granted yet`,
      };
    }
    cluster = status.cluster;
  }
  const found = lookups.cluster(referenceKey(cluster));
  if (!found)
    return { kind: "unresolved", message: `Cluster ${cluster.namespace}/${cluster.name} does not exist` };
  const profile = lookups.profile(found.spec.profile);
  if (!profile) return { kind: "unresolved", message: `ClusterProfile ${found.spec.profile} does not exist` };
  return { kind: "resolved", cluster, profile: found.spec.profile, provider: profile.spec.providerRef.name };
}
