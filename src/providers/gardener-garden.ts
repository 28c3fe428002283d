/** A garden the gardener backend talks to, and what it records of a Cluster's Shoot there. */
import { isNotFound } from "../api/error-message.ts";
import type { Shoot, ShootPoolMember } from "./gardener-shoot.ts";
import type { KubeconfigAccess, KubeconfigSecretRef } from "./shared/kubeconfig-secret.ts";
import type { RemoteApi, RemoteRecord } from "./shared/remote-object.ts";

/** What the backend remembers of one Cluster (or pool member): where its Shoot is. */
export interface ShootRecord extends RemoteRecord {
  readonly garden: KubeconfigSecretRef;
  readonly shoot: string;
  /** The warm pool member whose Shoot it is (the Cluster's by binding when `uid` is not the member's id). */
  readonly member?: ShootPoolMember;
}

/** A garden: its kubeconfig and clients. */
export interface Garden extends RemoteApi {
  readonly access: KubeconfigAccess;
}

/** The Shoots in `namespace` (those carrying every label of `labels`, if given); none when it does not exist. */
export async function listShoots(
  garden: Garden,
  namespace: string,
  labels: Readonly<Record<string, string>> = {},
): Promise<Shoot[]> {
  const labelSelector = Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
  try {
    return (
      (await garden.custom.listNamespacedCustomObject({
        group: "core.gardener.cloud",
        version: "v1beta1",
        plural: "shoots",
        namespace,
        ...(labelSelector ? { labelSelector } : {}),
      })) as { items: Shoot[] }
    ).items;
  } catch (error) {
    if (isNotFound(error)) return [];
    throw garden.error(`listing the Shoots in ${namespace}`, error);
  }
}
