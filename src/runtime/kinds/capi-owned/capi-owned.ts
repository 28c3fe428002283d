/**
 * What the I/O halves of the kinds Cluster API owns (EngineCluster, EngineControlPlane) share: what wakes
 * them, the reconcile of a paused one, and whether the owning CAPI Cluster is paused as `explain` reads it.
 */

import type { ClusterObservation } from "../../../api/backend.ts";
import { CAPI_CLUSTER_RESOURCE, owningCapiCluster } from "../../../api/cluster-api.ts";
import type { ClusterProfile } from "../../../api/cluster-profile.ts";
import type { ObjectMeta } from "../../../api/common.ts";
import { objectKey } from "../../../api/object-key.ts";
import type { ProviderConfig } from "../../../api/provider-config.ts";
import type { MachineStep } from "../../../machines/shared/machine-step.ts";
import type { CacheSpec, SecretObject } from "../../informers.ts";
import {
  type KindContext,
  type MachineObject,
  type ObjectReader,
  type Reconciliation,
  type Wake,
  wake,
} from "../../machine-kind.ts";
import { PROFILE_CACHES } from "../provider-config/caches.ts";
import { profilesOf } from "../shared/profile-offer.ts";
import { CAPI_CACHES } from "./caches.ts";

/** An object a CAPI Cluster owns, as far as its wakes go. */
interface CapiOwned {
  readonly metadata: ObjectMeta;
  readonly spec: { readonly profile: string };
}

/**
 * The wakes of a CAPI-owned kind (`cache`): its owning Cluster paused, unpaused or provisioned (or one that
 * appears); someone deleting or changing what it published (the kubeconfig Secrets of `secrets` and the
 * ClusterEndpoints, labelled `uidLabel` with its uid); its profile and the profile's ProviderConfig.
 */
export function capiOwnedWakes<O extends CapiOwned>(
  cache: CacheSpec<O>,
  secrets: CacheSpec<SecretObject>,
  uidLabel: string,
): readonly Wake<never>[] {
  const matching = (context: KindContext, test: (object: O) => boolean): string[] =>
    context.informers.of(cache).list().filter(test).map(objectKey);
  return [
    wake(CAPI_CACHES.capiClusters, (owner, context) =>
      matching(
        context,
        (object) =>
          object.metadata.namespace === owner.metadata.namespace &&
          owningCapiCluster(object.metadata) === owner.metadata.name,
      ),
    ),
    wake(secrets, (secret, context) =>
      matching(context, (object) => object.metadata.uid === secret.metadata.labels?.[uidLabel]),
    ),
    wake(CAPI_CACHES.clusterEndpoints, (endpoint, context) =>
      matching(context, (object) => object.metadata.uid === endpoint.metadata.labels?.[uidLabel]),
    ),
    wake(PROFILE_CACHES.profiles, (profile: ClusterProfile, context) =>
      matching(context, (object) => object.spec.profile === profile.metadata.name),
    ),
    wake(PROFILE_CACHES.providerConfigs, (config: ProviderConfig, context) => {
      const profiles = profilesOf(context, config);
      return matching(context, (object) => profiles.has(object.spec.profile));
    }),
  ];
}

/** Whether the CAPI Cluster owning `object` has `spec.paused: true`, as `explain` reads it. */
export async function ownerPausedFor(object: { readonly metadata: ObjectMeta }, read: ObjectReader) {
  const owner = owningCapiCluster(object.metadata);
  const found = owner ? await read(CAPI_CLUSTER_RESOURCE, object.metadata.namespace, owner) : undefined;
  return (
    typeof found === "object" &&
    found !== null &&
    (found as { spec?: { paused?: boolean } }).spec?.paused === true
  );
}

/**
 * A reconcile that asks no backend (a paused object; one whose profile is missing and for which nothing was
 * built): it observes nothing (`publication` stands for what it did not look at), runs no command, and `step`
 * writes only what it can say (the Paused condition; the missing profile).
 */
export function reconcileWithoutBackend<T extends MachineObject, Publication, Command>(
  publication: Publication,
  step: (object: T, now: string) => MachineStep<T["metadata"], unknown, Command>,
): Reconciliation<T, { readonly backend: ClusterObservation; readonly publication: Publication }, Command> {
  return {
    observe: async () => ({ backend: { exists: false }, publication }),
    step: (object, _, { now }) => step(object, now),
    run: async () => {},
  };
}
