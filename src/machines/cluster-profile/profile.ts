/** The ClusterProfile a ProviderConfig yields, and the ProviderConfig's status about it. Pure. */
import type { ClusterProfile, SupportedVersion } from "../../api/cluster-profile.ts";
import type { Condition } from "../../api/common.ts";
import { PROVIDER_CONFIG_LABELS, PROVIDER_CONFIG_REASONS } from "../../api/constants/provider-config.ts";
import { ANNOTATIONS, CLUSTERS_API_VERSION, LABELS, REASONS } from "../../api/constants.ts";
import type { ProviderConfig, ProviderConfigStatus } from "../../api/provider-config.ts";
import { mergeConditions } from "../shared/conditions.ts";
import { diff, type Json, type PatchOperation } from "../shared/json-patch.ts";
import type { EventRecord } from "../shared/machine-step.ts";
import { type ProfileHolder, profileTaken, profileTakenMessage } from "./profile-holder.ts";

/** Who makes the profile. */
export interface ProfileOwner {
  /** `--provider-name` */
  readonly providerName: string;
  /** `--environment` */
  readonly environment: string;
  /** Names of the backends this controller runs: ProviderConfigs naming one of them are served. */
  readonly backends: readonly string[];
}

/** Why a ProviderConfig of ours publishes no profile of a name Clusters ask for: the config and its Ready condition. */
export interface UnpublishedProfile {
  readonly config: string;
  readonly reason: string;
  readonly message: string;
}

/**
 * The name of the profile `config` publishes: its `spec.profileName` when set (e.g. `kind`, as openMCP's
 * own providers name theirs), else `<environment>.<provider-name>.<config-name>`, unique across providers
 * and their instances.
 */
export function profileName(
  owner: Pick<ProfileOwner, "providerName" | "environment">,
  config: ProviderConfig,
): string {
  return (
    config.spec.profileName ?? `${owner.environment}.${owner.providerName}.${config.metadata.name ?? ""}`
  );
}

/**
 * The profile for `config`, offering `versions` (what the backend supports of what the config lists) and
 * `traits` (the backend's for the config). Traits go into the `engine.openmcp.cloud/traits` annotation,
 * each once, sorted and comma-separated (`a,b`), and the annotation is absent when there are none, since
 * openMCP's ClusterProfile has no field for them: a scheduler (ours, or another that knows the annotation)
 * reads from it what the profile's clusters have.
 */
export function desiredClusterProfile(
  config: ProviderConfig,
  owner: ProfileOwner,
  versions: readonly SupportedVersion[],
  traits: readonly string[],
): ClusterProfile {
  const configName = config.metadata.name ?? "";
  const offered = [...new Set(traits)].sort().join(",");
  return {
    apiVersion: CLUSTERS_API_VERSION,
    kind: "ClusterProfile",
    metadata: {
      name: profileName(owner, config),
      labels: { [LABELS.provider]: owner.providerName, [PROVIDER_CONFIG_LABELS.providerConfig]: configName },
      ...(offered ? { annotations: { [ANNOTATIONS.traits]: offered } } : {}),
    },
    spec: {
      providerRef: { name: owner.providerName },
      providerConfigRef: { name: configName },
      supportedVersions: versions.map((v) =>
        v.deprecated ? { version: v.version, deprecated: true } : { version: v.version },
      ),
    },
  };
}

/** Whether the stored profile already says what the desired one says (labels, the traits annotation and spec). */
export function profileUpToDate(stored: ClusterProfile | undefined, desired: ClusterProfile): boolean {
  if (!stored) return false;
  const labelsMatch = Object.entries(desired.metadata.labels ?? {}).every(
    ([key, value]) => stored.metadata.labels?.[key] === value,
  );
  const traitsMatch =
    stored.metadata.annotations?.[ANNOTATIONS.traits] === desired.metadata.annotations?.[ANNOTATIONS.traits];
  return (
    labelsMatch && traitsMatch && JSON.stringify(normalise(stored)) === JSON.stringify(normalise(desired))
  );
}

/**
 * How the stored profile becomes `desired`: made whole when there is none, else one patch of its labels (ours
 * added, others' kept), its traits annotation and its spec; undefined when it is up to date.
 */
export function profileWrite(
  stored: ClusterProfile | undefined,
  desired: ClusterProfile,
): { readonly create: ClusterProfile } | { readonly patch: PatchOperation[] } | undefined {
  if (profileUpToDate(stored, desired)) return undefined;
  if (!stored) return { create: desired };
  const current = { metadata: stored.metadata, spec: stored.spec };
  const annotations: Record<string, string> = { ...stored.metadata.annotations };
  const traits = desired.metadata.annotations?.[ANNOTATIONS.traits];
  if (traits === undefined) delete annotations[ANNOTATIONS.traits];
  else annotations[ANNOTATIONS.traits] = traits;
  const { annotations: _, ...rest } = stored.metadata;
  const wanted = {
    metadata: {
      ...rest,
      labels: { ...stored.metadata.labels, ...desired.metadata.labels },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec: desired.spec,
  };
  return { patch: diff(current as unknown as Json, wanted as unknown as Json) };
}

function normalise(profile: ClusterProfile) {
  return {
    providerRef: profile.spec.providerRef.name,
    providerConfigRef: profile.spec.providerConfigRef.name,
    versions: (profile.spec.supportedVersions ?? []).map((v) => [v.version, v.deprecated === true]),
  };
}

/**
 * The status a ProviderConfig gets: served (with its profile) or why not; `problem` is what the backend found
 * wrong with the config when it read its offer (then no profile is offered); `holder` who holds the profile's
 * name (a taken name: no profile is written, see profile-holder.ts).
 */
export function providerConfigStatus(
  config: ProviderConfig,
  owner: ProfileOwner,
  versions: readonly SupportedVersion[] | undefined,
  now: string,
  problem?: string,
  holder?: ProfileHolder,
): ProviderConfigStatus {
  const generation = config.metadata.generation ?? 0;
  const served = owner.backends.includes(config.spec.backend);
  const name = profileName(owner, config);
  const condition = !served
    ? {
        type: "Ready",
        status: "False" as const,
        reason: REASONS.ConfigurationProblem,
        message: `backend "${config.spec.backend}" is not one this controller runs (${owner.backends.map((name) => `"${name}"`).join(", ")}); no ClusterProfile is made`,
      }
    : problem !== undefined
      ? {
          type: "Ready",
          status: "False" as const,
          reason: REASONS.ConfigurationProblem,
          message: `${problem}; no ClusterProfile is made`,
        }
      : holder && profileTaken(holder)
        ? {
            type: "Ready",
            status: "False" as const,
            reason: PROVIDER_CONFIG_REASONS.ProfileNameTaken,
            message: profileTakenMessage(name, holder),
          }
        : (versions ?? []).length === 0
          ? {
              type: "Ready",
              status: "False" as const,
              reason: REASONS.UnsupportedVersion,
              message: `backend ${config.spec.backend} supports none of the listed versions; the profile offers nothing`,
            }
          : {
              type: "Ready",
              status: "True" as const,
              reason: REASONS.Ready,
              message: `ClusterProfile ${name} offers ${(versions ?? []).map((v) => v.version).join(", ")}`,
            };
  const conditions: Condition[] = mergeConditions(config.status?.conditions, [condition], generation, now);
  // The PROFILE column never names a profile that is not there (one of the name another holds is).
  const published = served && problem === undefined;
  return {
    observedGeneration: generation,
    ...(published ? { profileName: name } : {}),
    conditions,
    // The pool controller's part: kept as it stands.
    ...(config.status?.pools ? { pools: config.status.pools } : {}),
  };
}

/**
 * The Event of a ProviderConfig whose Ready condition changed (`previous` → `next`): a Warning with the
 * condition's reason and message when it turned or stayed False for another reason, a Normal one when it
 * became True again; none when nothing a person must know changed.
 */
export function providerConfigEvent(
  previous: ProviderConfigStatus | undefined,
  next: ProviderConfigStatus,
): EventRecord | undefined {
  const ready = (status: ProviderConfigStatus | undefined) =>
    status?.conditions?.find((condition) => condition.type === "Ready");
  const before = ready(previous);
  const after = ready(next);
  if (!after || (before?.status === after.status && before.reason === after.reason)) return undefined;
  if (after.status === "False") return { type: "Warning", reason: after.reason, message: after.message };
  return before?.status === "False"
    ? { type: "Normal", reason: after.reason, message: after.message }
    : undefined;
}
