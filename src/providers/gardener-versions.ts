/** What a Gardener CloudProfile offers: the Kubernetes versions a profile lists, and the traits of a Shoot template. Pure. */
import type { SupportedVersion } from "../api/cluster-profile.ts";
import type { JsonObject } from "../api/common.ts";
import { compareVersions, parseVersion } from "../machines/backend-cluster/kubernetes-version.ts";

/** One entry of a CloudProfile's `spec.kubernetes.versions` (Gardener's `ExpirableVersion`), as read. */
export interface CloudProfileVersion {
  readonly version?: unknown;
  readonly classification?: unknown;
  readonly expirationDate?: unknown;
  readonly lifecycle?: unknown;
}

/** A version's classification at `now`: the current lifecycle stage where there is one, else `classification`. */
export function classificationAt(entry: CloudProfileVersion, now: number): string | undefined {
  if (typeof entry.expirationDate === "string" && Date.parse(entry.expirationDate) <= now) return "expired";
  if (Array.isArray(entry.lifecycle) && entry.lifecycle.length > 0) {
    // Stages come in order; the current one is the last that has started (the first may omit its start).
    let current: string | undefined;
    for (const stage of entry.lifecycle as readonly { classification?: unknown; startTime?: unknown }[]) {
      const start =
        typeof stage.startTime === "string" ? Date.parse(stage.startTime) : Number.NEGATIVE_INFINITY;
      if (start <= now && typeof stage.classification === "string") current = stage.classification;
    }
    return current ?? "unavailable";
  }
  return typeof entry.classification === "string" ? entry.classification : undefined;
}

/**
 * The versions a profile offers from a CloudProfile's `spec.kubernetes.versions` at `now`: supported ones, and
 * deprecated ones flagged as such; preview, expired, unavailable and unclassified versions are left out (a
 * Cluster must not land on a version Gardener does not stand behind). Newest first, each once.
 */
export function cloudProfileVersions(cloudProfile: unknown, now: number): SupportedVersion[] {
  const spec = (cloudProfile as { spec?: { kubernetes?: { versions?: unknown } } } | undefined)?.spec;
  const entries = Array.isArray(spec?.kubernetes?.versions)
    ? (spec.kubernetes.versions as CloudProfileVersion[])
    : [];
  const offered = new Map<string, SupportedVersion>();
  for (const entry of entries) {
    if (typeof entry.version !== "string" || parseVersion(entry.version)?.parts.length !== 3) continue;
    const classification = classificationAt(entry, now);
    if (classification === "supported") offered.set(entry.version, { version: entry.version });
    else if (classification === "deprecated" && !offered.has(entry.version))
      offered.set(entry.version, { version: entry.version, deprecated: true });
  }
  return [...offered.values()].sort((a, b) => compareVersions(b.version, a.version));
}

/**
 * Traits of the clusters a Shoot template makes: `workerless` when it has no worker pools, the infrastructure
 * (`provider.type`, as `provider-<type>`) and the region (`region-<name>`).
 */
export function shootTemplateTraits(spec: JsonObject | undefined): string[] {
  const provider = spec?.provider as { type?: unknown; workers?: unknown } | undefined;
  const traits: string[] = [];
  if (!Array.isArray(provider?.workers) || provider.workers.length === 0) traits.push("workerless");
  if (typeof provider?.type === "string" && provider.type !== "") traits.push(`provider-${provider.type}`);
  if (typeof spec?.region === "string" && spec.region !== "") traits.push(`region-${spec.region}`);
  return traits;
}
