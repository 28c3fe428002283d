/** Shapes shared by every kind of the openMCP cluster API and the engine's own API: JSON, metadata, conditions, references. */

import type { V1OwnerReference } from "@kubernetes/client-node";

/** A JSON scalar. */
export type JsonPrimitive = string | number | boolean | null;

/** Any JSON value, for free-form fields such as a Cluster's `status.providerStatus`. */
export type JsonValue = JsonPrimitive | JsonArray | JsonObject;

/** A JSON array. */
export type JsonArray = readonly JsonValue[];

/** A JSON object. */
export type JsonObject = { readonly [key: string]: JsonValue };

/**
 * The parts of Kubernetes object metadata the engine reads or writes, as they travel on the wire.
 *
 * Caveats: client-node's `V1ObjectMeta` types timestamps as `Date`, but objects of custom resources arrive
 * as plain JSON, where they are RFC 3339 strings; hence this type instead of `V1ObjectMeta`.
 */
export interface ObjectMeta {
  /** Name, unique per kind within the namespace (or cluster-wide for cluster-scoped kinds). */
  readonly name?: string;
  /** Prefix from which the API server generates a name when `name` is empty. */
  readonly generateName?: string;
  /** Namespace of a namespaced object; absent for cluster-scoped ones. */
  readonly namespace?: string;
  /** Unique id the API server assigns at creation. */
  readonly uid?: string;
  /** Opaque version for optimistic concurrency; changes on every write. */
  readonly resourceVersion?: string;
  /** Incremented by the API server whenever the spec (not the status) changes. */
  readonly generation?: number;
  /** When the object was created (RFC 3339). */
  readonly creationTimestamp?: string;
  /** When deletion was requested (RFC 3339); the object lingers while finalizers remain. */
  readonly deletionTimestamp?: string;
  /** Identifying key/value pairs, usable in selectors. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Non-identifying key/value pairs. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** Keys of parties that must finish cleanup before the object goes away. */
  readonly finalizers?: readonly string[];
  /** Objects this one belongs to, for garbage collection. */
  readonly ownerReferences?: readonly Readonly<V1OwnerReference>[];
}

/** The parts of a core-API Secret the engine reads and caches (data values are base64, as on the wire). */
export interface SecretObject {
  readonly metadata: Pick<ObjectMeta, "name" | "namespace" | "resourceVersion" | "labels">;
  readonly data?: Readonly<Record<string, string>>;
}

/** The header every object of a served kind carries. */
export interface TypedObject<ApiVersion extends string, Kind extends string> {
  /** Group and version of the schema, e.g. `clusters.openmcp.cloud/v1alpha1`. */
  readonly apiVersion: ApiVersion;
  /** Kind of the object, e.g. `Cluster`. */
  readonly kind: Kind;
  /** Standard object metadata. */
  readonly metadata: ObjectMeta;
}

/** Value of a condition's `status`. */
export type ConditionStatus = "True" | "False" | "Unknown";

/** One observation about one aspect of an object, in the shape of Kubernetes' `metav1.Condition`. */
export interface Condition {
  /** What the condition is about, in CamelCase (unique within the object). */
  readonly type: string;
  /** Whether the condition holds. */
  readonly status: ConditionStatus;
  /** The `metadata.generation` the condition was computed for. */
  readonly observedGeneration?: number;
  /** When `status` last changed (RFC 3339); rewriting an unchanged condition keeps it. */
  readonly lastTransitionTime: string;
  /** Machine-readable cause of the current status, in CamelCase. */
  readonly reason: string;
  /** Explanation for a person; may be empty. */
  readonly message: string;
}

/**
 * Status fields shared by Cluster, ClusterRequest and AccessRequest.
 * There is deliberately no top-level reason or message: conditions carry those.
 */
export interface CommonStatus<Phase extends string = string> {
  /** The `metadata.generation` this status was computed for. */
  readonly observedGeneration: number;
  /** One-word summary of the conditions. */
  readonly phase: Phase;
  /** Individual observations, at most one per type. */
  readonly conditions?: readonly Condition[];
}

/**
 * Status fields of the kinds that store their machine state in their status (Rollout, ClusterSnapshot, the
 * schedules, EngineCluster, EngineControlPlane), each absent until the engine first writes it.
 */
export interface StoredStateStatus {
  /** The `metadata.generation` this status was computed for. */
  readonly observedGeneration?: number;
  /** One-word summary of the state (each kind names its phases). */
  readonly phase?: string;
  /** The machine state, read back by the next step. */
  readonly state?: string;
  /** Individual observations, at most one per type (each kind names its conditions). */
  readonly conditions?: readonly Condition[];
}

/** A reference to a namespaced object in any namespace. */
export interface ObjectReference {
  /** Name of the object. */
  readonly name: string;
  /** Namespace of the object. */
  readonly namespace: string;
}

/** A reference by name: to an object in the referrer's namespace, or to a cluster-scoped object. */
export interface LocalObjectReference {
  /** Name of the object. */
  readonly name: string;
}
