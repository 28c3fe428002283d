/**
 * The changes a plan is asked about (create, update or delete of objects of our kinds and openMCP's), and what
 * each does to the object as the API server would store it. Pure.
 */
import { createHash } from "node:crypto";
import { CAPI_CLUSTER_RESOURCE } from "../../api/cluster-api.ts";
import { HIBERNATION_SCHEDULE_RESOURCE } from "../../api/constants/hibernation-schedule.ts";
import { ROLLOUT_RESOURCE } from "../../api/constants/rollout.ts";
import { RESOURCES } from "../../api/constants.ts";
import { CONTROLPLANE_RESOURCES } from "../../api/engine-control-plane.ts";
import { objectKey } from "../../api/object-key.ts";
import type { WatchedObject } from "../informer.ts";
import type { ResourceId } from "./planned-sources.ts";

/** An object as a manifest gives it (YAML or JSON): apiVersion, kind, metadata, and the rest. */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly [field: string]: unknown;
  };
  readonly spec?: unknown;
  readonly [field: string]: unknown;
}

/** The object one change is about. */
export interface ChangeTarget {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/**
 * One proposed change: `apply` creates the object or, when it exists, replaces its spec and sets the labels and
 * annotations it names (others stay, as a merge patch leaves them); `delete` deletes it (with finalizers on it,
 * it is marked for deletion and waits for them, as the API server does).
 */
export type PlanChange = { readonly apply: Manifest } | { readonly delete: ChangeTarget };

/** Why a change cannot be planned (an unknown kind, a missing name, deleting what does not exist). */
export class PlanChangeError extends Error {
  override readonly name = "PlanChangeError";
}

/** What a change does: the object before and after it (undefined: absent), and the verb. */
export interface ChangeEffect {
  readonly verb: "create" | "update" | "delete" | "none";
  readonly before: WatchedObject | undefined;
  readonly after: WatchedObject | undefined;
}

/** Every kind a plan knows: openMCP's and ours in RESOURCES, and the engine's kinds served in groups of their own. */
export const PLANNED_RESOURCES: Readonly<Record<string, ResourceId & { readonly namespaced: boolean }>> = {
  ...RESOURCES,
  Rollout: ROLLOUT_RESOURCE,
  HibernationSchedule: HIBERNATION_SCHEDULE_RESOURCE,
  EngineControlPlane: CONTROLPLANE_RESOURCES.EngineControlPlane,
  EngineControlPlaneTemplate: CONTROLPLANE_RESOURCES.EngineControlPlaneTemplate,
};

/** Kinds whose name another group serves too, by `<apiVersion> <kind>`: Cluster API's Cluster (owner of the CAPI kinds). */
const ALSO_PLANNED: Readonly<Record<string, ResourceId & { readonly namespaced: boolean }>> = {
  [`${CAPI_CLUSTER_RESOURCE.group}/${CAPI_CLUSTER_RESOURCE.version} Cluster`]: CAPI_CLUSTER_RESOURCE,
};

/**
 * The resource of a kind a plan knows ({@link PLANNED_RESOURCES}, or by its apiVersion {@link ALSO_PLANNED}),
 * checked against the apiVersion when given.
 */
export function resourceOfKind(
  kind: string,
  apiVersion?: string,
): ResourceId & { readonly namespaced: boolean } {
  const resource = ALSO_PLANNED[`${apiVersion} ${kind}`] ?? PLANNED_RESOURCES[kind];
  if (!resource) {
    throw new PlanChangeError(
      `plan does not know kind ${kind}; it knows ${Object.keys(PLANNED_RESOURCES).join(", ")}`,
    );
  }
  const expected = `${resource.group}/${resource.version}`;
  if (apiVersion !== undefined && apiVersion !== expected) {
    throw new PlanChangeError(`${kind} is served as ${expected}, not ${apiVersion}`);
  }
  return {
    group: resource.group,
    version: resource.version,
    plural: resource.plural,
    namespaced: resource.namespaced,
  };
}

/** The object a change is about, as `kind namespace/name`. */
export function targetOf(change: PlanChange): ChangeTarget {
  if ("delete" in change) return change.delete;
  const { apiVersion, kind, metadata } = change.apply;
  return {
    apiVersion,
    kind,
    name: metadata?.name,
    ...(metadata?.namespace ? { namespace: metadata.namespace } : {}),
  };
}

/** The change's target in words. */
export function describeTarget(target: ChangeTarget): string {
  return `${target.kind} ${target.namespace ? `${target.namespace}/` : ""}${target.name}`;
}

/**
 * What `change` does to `live` (the object as stored now, undefined when absent) at `now` (RFC 3339).
 * Creates get a uid derived from the object's key (stable across plans of one change), generation 1 and no
 * status; an update that changes the spec bumps the generation. CRD defaults and validation are not applied.
 */
export function applyChange(change: PlanChange, live: WatchedObject | undefined, now: string): ChangeEffect {
  const target = targetOf(change);
  if (!target.kind || !target.name) throw new PlanChangeError("every change needs a kind and metadata.name");
  const { namespaced } = resourceOfKind(target.kind, target.apiVersion);
  if (namespaced && !target.namespace) {
    throw new PlanChangeError(
      `${describeTarget(target)}: ${target.kind} is namespaced; give metadata.namespace`,
    );
  }
  if ("delete" in change) {
    if (!live) throw new PlanChangeError(`${describeTarget(target)} does not exist; nothing to delete`);
    const metadata = live.metadata as { finalizers?: string[]; deletionTimestamp?: string };
    if ((metadata.finalizers ?? []).length === 0) return { verb: "delete", before: live, after: undefined };
    if (metadata.deletionTimestamp) return { verb: "none", before: live, after: live };
    return {
      verb: "delete",
      before: live,
      after: {
        ...live,
        metadata: { ...live.metadata, deletionTimestamp: now, deletionGracePeriodSeconds: 0 },
      } as WatchedObject,
    };
  }
  const { status: _status, ...manifest } = change.apply;
  if (!live) {
    const { resourceVersion: _rv, uid: _uid, ...given } = manifest.metadata;
    const created = {
      ...manifest,
      metadata: {
        ...given,
        uid: plannedUid(objectKey(manifest), target.kind),
        resourceVersion: "0",
        generation: 1,
        creationTimestamp: now,
      },
    };
    return { verb: "create", before: undefined, after: created as WatchedObject };
  }
  const stored = live as WatchedObject & {
    metadata: { labels?: Record<string, string>; annotations?: Record<string, string>; generation?: number };
    spec?: unknown;
  };
  const labels = { ...stored.metadata.labels, ...manifest.metadata.labels };
  const annotations = { ...stored.metadata.annotations, ...manifest.metadata.annotations };
  const spec = "spec" in manifest ? manifest.spec : stored.spec;
  const specChanged = JSON.stringify(spec) !== JSON.stringify(stored.spec);
  const after = {
    ...stored,
    metadata: {
      ...stored.metadata,
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ...(specChanged ? { generation: (stored.metadata.generation ?? 1) + 1 } : {}),
    },
    ...(spec === undefined ? {} : { spec }),
  };
  const changed = JSON.stringify(after) !== JSON.stringify(stored);
  return { verb: changed ? "update" : "none", before: live, after: changed ? after : live };
}

/** A uid for an object the plan creates: derived from its kind and key, shaped like the API server's. */
function plannedUid(key: string, kind: string): string {
  const hex = createHash("sha256").update(`${kind}/${key}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
