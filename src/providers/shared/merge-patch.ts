/**
 * JSON merge patches (RFC 7386) of objects a backend keeps on a remote API server (a Shoot, a CAPI Cluster): what
 * counts as a difference, the patch of labels and annotations, and when a patch is worth sending again. Pure.
 */
import type { JsonObject, JsonValue } from "../../api/common.ts";
import { COPIED_METADATA_PREFIX } from "../../api/constants/cluster-request.ts";

/** Whether every value `wanted` sets is in `stored` (what the remote side defaulted beside it does not count). */
export function containedIn(wanted: unknown, stored: unknown): boolean {
  if (Array.isArray(wanted)) {
    return (
      Array.isArray(stored) &&
      wanted.length === stored.length &&
      wanted.every((item, i) => containedIn(item, stored[i]))
    );
  }
  if (typeof wanted === "object" && wanted !== null) {
    if (typeof stored !== "object" || stored === null || Array.isArray(stored)) return false;
    return Object.entries(wanted).every(([key, value]) => containedIn(value, (stored as JsonObject)[key]));
  }
  return wanted === stored;
}

/**
 * Whether a Cluster's label (`label`) or annotation `key` goes onto the object made for it: openMCP's
 * `metadata.open-control-plane.io/*`, and the labels named in `labels`.
 */
export function isCopied(key: string, label: boolean, labels: readonly string[] = []): boolean {
  return key.startsWith(COPIED_METADATA_PREFIX) || (label && labels.includes(key));
}

/** The entries of a Cluster's label (`label`) or annotation map that are copied along (see {@link isCopied}). */
export function copiedEntries(
  map: Readonly<Record<string, string>> | undefined,
  label: boolean,
  labels: readonly string[] = [],
): Record<string, string> {
  return Object.fromEntries(Object.entries(map ?? {}).filter(([key]) => isCopied(key, label, labels)));
}

/** Labels and annotations, as far as a patch compares them. */
interface Metadata {
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** Merge-patch entries for a label (`label`) or annotation map: desired values that differ, `null` for copied keys that went. */
function mapChanges(
  stored: Readonly<Record<string, string>> | undefined,
  desired: Readonly<Record<string, string>> | undefined,
  label: boolean,
  labels: readonly string[],
): Record<string, string | null> | undefined {
  const changes: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(desired ?? {})) if (stored?.[key] !== value) changes[key] = value;
  for (const key of Object.keys(stored ?? {}))
    if (isCopied(key, label, labels) && desired?.[key] === undefined) changes[key] = null;
  return Object.keys(changes).length > 0 ? changes : undefined;
}

/**
 * The merge patch of `spec` changes plus the label and annotation changes from `stored` to `desired` (copied keys
 * that went are removed; `copiedLabels` as for {@link isCopied}), or `undefined` when nothing differs.
 */
export function mergePatch(
  stored: Metadata,
  desired: Metadata,
  spec: Readonly<Record<string, JsonValue>>,
  copiedLabels: readonly string[] = [],
): JsonObject | undefined {
  const metadata: Record<string, JsonValue> = {};
  const labels = mapChanges(stored.labels, desired.labels, true, copiedLabels);
  const annotations = mapChanges(stored.annotations, desired.annotations, false, copiedLabels);
  if (labels) metadata.labels = labels;
  if (annotations) metadata.annotations = annotations;
  if (Object.keys(spec).length === 0 && Object.keys(metadata).length === 0) return undefined;
  return {
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    ...(Object.keys(spec).length > 0 ? { spec: { ...spec } } : {}),
  };
}

/** A merge patch the backend sent, and the object generation it led to. */
export interface SentPatch {
  /** The patch, as JSON. */
  readonly changes: string;
  readonly generation: number;
}

/**
 * Whether `changes` are worth sending: not when there are none, nor when the very same patch was sent already
 * and the remote side has taken it in (the object's `generation` reached the one the patch led to) yet the
 * difference stays — then someone changes it back, and sending it again would only loop.
 */
export function patchWorthSending(
  changes: JsonObject | undefined,
  last: SentPatch | undefined,
  generation: number,
): boolean {
  if (!changes) return false;
  return !(last !== undefined && last.changes === JSON.stringify(changes) && generation >= last.generation);
}
