/** A garden the gardener backend talks to, and what it records of a Cluster's Shoot there. */
import type { ShootPoolMember } from "./gardener-shoot.ts";
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
