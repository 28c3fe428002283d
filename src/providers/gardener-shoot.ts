/**
 * A Cluster as a Gardener Shoot: its name, the Shoot the engine wants, the smallest merge patch that gets an
 * existing Shoot there, and what a Shoot's status says about the cluster. Pure.
 */

import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { BackendCondition, BackendPhase, ClusterObservation, ClusterTarget } from "../api/backend.ts";
import { poolMemberTarget } from "../api/cluster-pool.ts";
import type { JsonObject, JsonValue, ObjectMeta } from "../api/common.ts";
import { CLUSTER_POOL_ANNOTATIONS } from "../api/constants/cluster-pool.ts";
import { ENGINE_GROUP } from "../api/constants.ts";
import { compareVersions } from "../machines/backend-cluster/kubernetes-version.ts";
import { parsePoolMemberAnnotation, poolMemberAnnotation } from "../machines/cluster-pool/claim.ts";
import { applyClusterConfigs } from "./gardener-cluster-configs.ts";
import type { GardenerSettings } from "./gardener-settings.ts";
import { containedIn, copiedEntries, mergePatch } from "./shared/merge-patch.ts";

/** Labels and annotations the backend reads or writes. */
export const GARDENER_KEYS = {
  /** On a Cluster: the Shoot name to use instead of the derived one. */
  shootNameLabel: `${ENGINE_GROUP}/shoot-name`,
  /** On a Shoot: the Cluster (`namespace/name`) and its uid that it was made for. */
  clusterAnnotation: `${ENGINE_GROUP}/cluster`,
  clusterUidAnnotation: `${ENGINE_GROUP}/cluster-uid`,
  /** Gardener refuses to delete a Shoot without it (the DeletionConfirmation admission plugin). */
  deletionConfirmation: "confirmation.gardener.cloud/deletion",
  /**
   * On a warm pool member's Shoot (contract 1.5): `<ClusterPool>/<member id>`, as on a Cluster served from it; the
   * version the pool asked for; and, once bound, the uid of the Cluster it serves. The Shoot is their record, so an
   * engine with an empty state folder (or another engine after a move) finds members and bindings in the garden.
   */
  poolMemberAnnotation: CLUSTER_POOL_ANNOTATIONS.poolMember,
  poolVersionAnnotation: `${ENGINE_GROUP}/pool-version`,
  boundToAnnotation: `${ENGINE_GROUP}/bound-to`,
} as const;

/** Annotations that tie a Shoot to its Cluster or pool: the engine's, which ClusterConfigs may not change. */
const OWNED_ANNOTATIONS = [
  GARDENER_KEYS.clusterAnnotation,
  GARDENER_KEYS.clusterUidAnnotation,
  GARDENER_KEYS.poolMemberAnnotation,
  GARDENER_KEYS.poolVersionAnnotation,
  GARDENER_KEYS.boundToAnnotation,
];

/** A warm pool member (contract 1.5) as its Shoot records it. */
export interface ShootPoolMember {
  readonly id: string;
  readonly pool: string;
  /** The version the pool asked for (the Shoot's own may move on once a Cluster holds it). */
  readonly version: string;
}

/** Labels of a Cluster that openMCP's Gardener provider puts on its Shoot as they are: the openMCP project and workspace. */
export const SHOOT_COPIED_LABELS = ["openmcp.cloud/project", "openmcp.cloud/workspace"] as const;

/** A Shoot as the backend reads it (only the fields it looks at). */
export interface Shoot {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: ObjectMeta & { readonly name: string };
  readonly spec: JsonObject & { readonly kubernetes?: JsonObject & { readonly version?: string } };
  readonly status?: ShootStatus;
}

/** The parts of a Shoot's status gardenlet writes that the backend reads. */
export interface ShootStatus {
  readonly observedGeneration?: number;
  /** Whether the Shoot is hibernated now (Gardener's `ShootStatus.IsHibernated`), set by gardenlet once it is. */
  readonly hibernated?: boolean;
  readonly technicalID?: string;
  readonly lastOperation?: {
    readonly type?: string;
    readonly state?: string;
    readonly progress?: number;
    readonly description?: string;
  };
  readonly lastErrors?: readonly { readonly description?: string }[];
  readonly conditions?: readonly {
    readonly type: string;
    readonly status: string;
    readonly reason?: string;
    readonly message?: string;
  }[];
  readonly advertisedAddresses?: readonly { readonly name: string; readonly url: string }[];
  /** Gardener's constraints, e.g. `HibernationPossible`. */
  readonly constraints?: readonly {
    readonly type: string;
    readonly status: string;
    readonly reason?: string;
    readonly message?: string;
  }[];
}

/** Whether the Shoot's spec asks for it hibernated (Gardener's `spec.hibernation.enabled`). */
export function hibernationEnabled(shoot: Shoot): boolean {
  return (shoot.spec.hibernation as JsonObject | undefined)?.enabled === true;
}

/**
 * The Shoot's name: the Cluster's `engine.openmcp.cloud/shoot-name` label if set, else `o` and eight base32
 * characters of a digest of the Cluster's namespace and name — short, because Gardener allows at most 21
 * characters for project and Shoot name together, and the same on every call, so a restarted engine finds the
 * Shoot it ordered.
 */
export function shootName(target: ClusterTarget): string {
  const override = target.labels?.[GARDENER_KEYS.shootNameLabel];
  if (override) return override;
  const digest = createHash("sha256").update(`${target.namespace}/${target.name}`).digest();
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  let name = "o";
  for (let i = 0; i < 8; i++) name += alphabet[(digest[i] ?? 0) % 32];
  return name;
}

/** The Shoot name of pool member `id`: derived from the id alone, so it is found without any record. */
export function memberShootName(id: string): string {
  return shootName(poolMemberTarget(id));
}

/**
 * The Shoot the engine wants for `target` at `version`: the template, the version, openMCP's metadata, who it is
 * for, and the Cluster's ClusterConfigs applied last. For a pool member's Shoot (`member`), its name and uid stay
 * the member's and it carries the pool's facts; a Cluster bound to it (`target.uid` not the member's id) is named
 * in `bound-to`. Throws a `ClusterConfigError` naming the ClusterConfig that cannot be applied.
 */
export function desiredShoot(
  target: ClusterTarget,
  settings: GardenerSettings,
  namespace: string,
  version: string,
  member?: ShootPoolMember,
): Shoot {
  const template = settings.template as JsonObject & { kubernetes?: JsonObject };
  const pool = member
    ? {
        [GARDENER_KEYS.poolMemberAnnotation]: poolMemberAnnotation(member.pool, member.id),
        [GARDENER_KEYS.poolVersionAnnotation]: member.version,
        ...(target.uid === member.id ? {} : { [GARDENER_KEYS.boundToAnnotation]: target.uid }),
      }
    : {};
  const shoot: Shoot = {
    apiVersion: "core.gardener.cloud/v1beta1",
    kind: "Shoot",
    metadata: {
      name: member ? memberShootName(member.id) : shootName(target),
      namespace,
      labels: { ...settings.labels, ...copiedEntries(target.labels, true, SHOOT_COPIED_LABELS) },
      annotations: {
        ...settings.annotations,
        ...copiedEntries(target.annotations, false),
        [GARDENER_KEYS.clusterAnnotation]: `${target.namespace}/${target.name}`,
        [GARDENER_KEYS.clusterUidAnnotation]: member?.id ?? target.uid,
        ...pool,
      },
    },
    spec: { ...template, kubernetes: { ...template.kubernetes, version } },
  };
  return applyClusterConfigs(
    shoot,
    target.clusterConfigs,
    { namespace: target.namespace, cluster: target.name },
    OWNED_ANNOTATIONS,
  );
}

/**
 * The labels openMCP's Gardener provider puts on a Shoot to name the Cluster it made it for (its `cluster-name` and
 * `cluster-namespace` labels; older releases wrote them as `<key>.gardener.clusters.openmcp.cloud`).
 */
export const OPENMCP_GARDENER_CLUSTER_LABELS = [
  {
    name: "gardener.clusters.openmcp.cloud/cluster-name",
    namespace: "gardener.clusters.openmcp.cloud/cluster-namespace",
  },
  {
    name: "cluster-name.gardener.clusters.openmcp.cloud",
    namespace: "cluster-namespace.gardener.clusters.openmcp.cloud",
  },
] as const;

/**
 * Whether `shoot` serves the Cluster (or pool member) `target`: made for its uid, or a pool member bound to it; or
 * made for it by openMCP's Gardener provider (its labels name the Cluster, and the engine has marked it for no
 * Cluster yet): such a Shoot is taken over as it runs, and marked with the Cluster's uid by the first update.
 */
export function shootServes(
  shoot: Shoot,
  target: Pick<ClusterTarget, "uid" | "namespace" | "name">,
): boolean {
  const annotations = shoot.metadata.annotations ?? {};
  const marked = annotations[GARDENER_KEYS.clusterUidAnnotation];
  if (marked === target.uid || annotations[GARDENER_KEYS.boundToAnnotation] === target.uid) return true;
  if (marked !== undefined) return false;
  const labels = shoot.metadata.labels ?? {};
  return OPENMCP_GARDENER_CLUSTER_LABELS.some(
    (keys) => labels[keys.name] === target.name && labels[keys.namespace] === target.namespace,
  );
}

/**
 * The pool member `shoot` is, with the Cluster uid it is bound to; undefined for a Cluster's own Shoot (or one whose
 * pool annotation names another member than the Shoot was made for).
 */
export function shootPoolMember(shoot: Shoot): (ShootPoolMember & { readonly boundTo?: string }) | undefined {
  const annotations = shoot.metadata.annotations ?? {};
  const value = annotations[GARDENER_KEYS.poolMemberAnnotation];
  if (value === undefined) return undefined;
  const { pool, member: id } = parsePoolMemberAnnotation(value);
  if (id === "" || annotations[GARDENER_KEYS.clusterUidAnnotation] !== id) return undefined;
  const boundTo = annotations[GARDENER_KEYS.boundToAnnotation];
  return {
    id,
    pool,
    version: annotations[GARDENER_KEYS.poolVersionAnnotation] ?? shoot.spec.kubernetes?.version ?? "",
    ...(boundTo ? { boundTo } : {}),
  };
}

/**
 * Spec lists the template and the ClusterConfigs own whole (Gardener defaults nothing inside their entries): compared
 * exactly, so a field a ClusterConfig no longer sets (an extension's `disabled`) goes from the Shoot too.
 */
const EXACT_SPEC_LISTS = ["extensions", "resources"] as const;

/**
 * The JSON merge patch (RFC 7386) that brings `stored` to `desired`, or `undefined` when nothing differs: only the
 * template's top-level spec fields that differ (Gardener's defaults beside them stay; `extensions` and `resources`
 * compared exactly, see {@link EXACT_SPEC_LISTS}), the version, and openMCP's
 * copied labels and annotations (set, changed, or removed when the Cluster no longer has them). Throws when the
 * version would go down: Gardener cannot downgrade, and neither does the engine.
 */
export function shootChanges(stored: Shoot, desired: Shoot): JsonObject | undefined {
  const spec: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(desired.spec)) {
    if (key === "kubernetes") continue;
    // `hibernation.enabled` is hibernate's and wake's (contract 1.6); the template's schedules are compared.
    const value = key === "hibernation" ? withoutEnabled(entry) : entry;
    if (value === undefined) continue;
    const same = (EXACT_SPEC_LISTS as readonly string[]).includes(key)
      ? isDeepStrictEqual(value, stored.spec[key])
      : containedIn(value, stored.spec[key]);
    if (!same) spec[key] = value as JsonObject;
  }
  const running = stored.spec.kubernetes?.version;
  const wanted = desired.spec.kubernetes?.version;
  const { version: _, ...kubernetesRest } = (desired.spec.kubernetes ?? {}) as JsonObject;
  if (!containedIn(kubernetesRest, stored.spec.kubernetes)) spec.kubernetes = { ...kubernetesRest };
  if (wanted && running !== wanted) {
    if (running && compareVersions(wanted, running) < 0)
      throw new Error(
        `Shoot ${stored.metadata.namespace}/${stored.metadata.name} runs Kubernetes ${running}; Gardener does not downgrade to ${wanted}`,
      );
    spec.kubernetes = { ...(spec.kubernetes as JsonObject), version: wanted };
  }
  return mergePatch(
    stored.metadata,
    desired.metadata,
    spec as Record<string, JsonValue>,
    SHOOT_COPIED_LABELS,
  );
}

/** A template's `hibernation` without `enabled` (undefined when nothing else is left). */
function withoutEnabled(hibernation: JsonValue | undefined): JsonValue | undefined {
  if (typeof hibernation !== "object" || hibernation === null || Array.isArray(hibernation))
    return hibernation;
  const { enabled: _, ...rest } = hibernation as JsonObject;
  return Object.keys(rest).length === 0 ? undefined : rest;
}

/** Shoot condition types that say the cluster works, in the order people read them. */
const HEALTH_CONDITIONS = [
  "APIServerAvailable",
  "ControlPlaneHealthy",
  "EveryNodeReady",
  "SystemComponentsHealthy",
];

/**
 * What a Shoot says about its cluster: `deleting` once deletion began; `failed` when the last operation failed
 * (Gardener gave up; its description and last errors are the message); `provisioning` until the first create
 * succeeded; `updating` while Gardener has not caught up with the spec (observedGeneration) or reconciles a
 * change; `ready` with the external advertised address as endpoint once the API server is available. Hibernation
 * (contract 1.6) as Gardener says it, once created: `hibernating` while `spec.hibernation.enabled` is true and
 * `status.hibernated` not yet, `hibernated` once it is, `waking` while the spec says awake and the status still
 * hibernated; each with the endpoint Gardener keeps advertising.
 * `info` sums up the last operation; `message` names every Shoot condition that is not True, with its message.
 */
export function shootObservation(shoot: Shoot): ClusterObservation & { readonly exists: true } {
  const status = shoot.status ?? {};
  const version = shoot.spec.kubernetes?.version ?? "";
  const operation = status.lastOperation;
  const info = [
    `Shoot ${shoot.metadata.namespace}/${shoot.metadata.name}`,
    operation
      ? `${operation.type ?? "?"} ${operation.state ?? "?"}${operation.progress === undefined ? "" : ` (${operation.progress}%)`}`
      : "waiting for gardenlet",
  ].join(": ");
  const unhealthy = (status.conditions ?? [])
    .filter((c) => c.status !== "True")
    .sort((a, b) => order(a.type) - order(b.type))
    .map(
      (c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ""}${c.message ? `: ${c.message}` : ""}`,
    );
  const errors = (status.lastErrors ?? []).map((e) => e.description ?? "").filter((d) => d !== "");
  const conditions = shootConditions(status);
  const base = { exists: true as const, version, info, ...(conditions.length > 0 ? { conditions } : {}) };
  if (shoot.metadata.deletionTimestamp) return { ...base, phase: "deleting" };
  if (operation?.state === "Failed") {
    const why = [operation.description, ...errors].filter(Boolean).join("; ");
    return {
      ...base,
      phase: "failed",
      message: `Gardener: ${operation.type} failed: ${why || "no description"}`,
    };
  }
  const endpoint = status.advertisedAddresses?.find((a) => a.name === "external")?.url;
  const apiServerUp = status.conditions?.some((c) => c.type === "APIServerAvailable" && c.status === "True");
  const created =
    !(operation?.type === "Create" && operation.state !== "Succeeded") && operation !== undefined;
  const message = [...unhealthy, ...(operation?.state === "Error" ? errors : [])].join("; ");
  const withMessage = message ? { message } : {};
  if (!created) return { ...base, phase: "provisioning", ...withMessage };
  const sleep = hibernationPhase(hibernationEnabled(shoot), status.hibernated === true);
  if (sleep) return { ...base, phase: sleep, ...(endpoint ? { endpoint } : {}), ...withMessage };
  if (!endpoint || !apiServerUp) return { ...base, phase: "provisioning", ...withMessage };
  const caughtUp = (status.observedGeneration ?? 0) >= (shoot.metadata.generation ?? 0);
  if (!caughtUp) return { ...base, phase: "updating", endpoint, ...withMessage };
  return { ...base, phase: "ready", endpoint, ...withMessage };
}

/** The hibernation phase of a Shoot whose spec asks `enabled` and whose status says `hibernated`; undefined: awake. */
function hibernationPhase(enabled: boolean, hibernated: boolean): BackendPhase | undefined {
  if (enabled) return hibernated ? "hibernated" : "hibernating";
  return hibernated ? "waking" : undefined;
}

/**
 * Why Gardener says the Shoot cannot be hibernated now (its `HibernationPossible` constraint False), or undefined.
 */
export function hibernationImpossible(shoot: Shoot): string | undefined {
  const constraint = shoot.status?.constraints?.find((c) => c.type === "HibernationPossible");
  if (constraint?.status !== "False") return undefined;
  return `Gardener: the Shoot cannot be hibernated${constraint.reason ? ` (${constraint.reason})` : ""}: ${constraint.message ?? "no message"}`;
}

/**
 * The Shoot's conditions as the Cluster shows them, each type prefixed `Shoot` (`ShootAPIServerAvailable`, …;
 * Gardener's `Progressing` status is `Unknown` there), and `ShootLastOperation`: True once an operation succeeded or
 * while a routine reconcile runs, False while the Shoot is created or deleted or after an error, with Gardener's
 * description and last errors.
 */
export function shootConditions(status: ShootStatus): BackendCondition[] {
  const mirrored: BackendCondition[] = (status.conditions ?? []).map((c) => ({
    type: `Shoot${c.type}`,
    status: c.status === "True" || c.status === "False" ? c.status : "Unknown",
    reason: camelCase(c.reason) ?? "ReportedByGardener",
    message: c.message ?? "",
  }));
  const operation = status.lastOperation;
  if (!operation) return mirrored;
  const fine =
    operation.state === "Succeeded" || (operation.type === "Reconcile" && operation.state === "Processing");
  const errors = (status.lastErrors ?? []).map((e) => e.description ?? "").filter((d) => d !== "");
  const progress = operation.progress === undefined ? "" : ` (${operation.progress}%)`;
  const detail = [operation.description, ...(fine ? [] : errors)].filter(Boolean).join("; ");
  return [
    ...mirrored,
    {
      type: "ShootLastOperation",
      status: fine ? "True" : "False",
      reason: camelCase(`${operation.type ?? ""}${operation.state ?? ""}`) ?? "Unknown",
      message: `${operation.type ?? "?"} ${operation.state ?? "?"}${progress}${detail ? `: ${detail}` : ""}`,
    },
  ];
}

/** `reason` as a condition reason may be (letters, digits, `_`, `,`, `:`, starting with a letter), or undefined. */
function camelCase(reason: string | undefined): string | undefined {
  const cleaned = (reason ?? "")
    .replace(/[^A-Za-z0-9_,:]/g, "")
    .replace(/^[^A-Za-z]+/, "")
    .replace(/[,:]+$/, "");
  return cleaned === "" ? undefined : cleaned;
}

function order(type: string): number {
  const index = HEALTH_CONDITIONS.indexOf(type);
  return index === -1 ? HEALTH_CONDITIONS.length : index;
}
