/**
 * A rollout's preflight, pure: before a stage asks a Cluster for the version, three checks of that Cluster.
 *
 * - Offered: the Cluster's ClusterProfile offers the version (`spec.supportedVersions`, a partial version matching
 *   any patch of it) — else `VersionNotOffered`; a missing profile offers nothing.
 * - Skew: the version is at most one minor above what the Cluster asks for now (`spec.kubernetes.version`, which it
 *   runs once Ready) and never below it — else `VersionSkew`. A Cluster that names no version (its provider chose)
 *   cannot be checked: a note (`VersionSkewNotChecked`), not a block.
 * - Deprecated APIs: none of the APIs its API server says were requested (`apiserver_requested_deprecated_apis`)
 *   is removed at or before the version's minor — else `DeprecatedAPIsInUse`, naming each API. A Cluster whose API
 *   server could not be read (no admin access, as on the simulated backend, or a failed read) is named with
 *   `DeprecatedAPIsNotChecked`, blocking only with `spec.preflight.requireDeprecatedAPICheck`.
 *
 * Every finding names its Cluster; the runtime reads the profiles and the API servers, this only decides.
 */
import type { Cluster } from "../../api/cluster.ts";
import type { ClusterProfile } from "../../api/cluster-profile.ts";
import { ROLLOUT_REASONS } from "../../api/constants/rollout.ts";
import type { RolloutSpec, RolloutTarget } from "../../api/rollout.ts";
import { parseVersion, resolveVersion } from "../backend-cluster/kubernetes-version.ts";
import { namesShown } from "../shared/names-shown.ts";
import { apiName, type DeprecatedApi } from "./deprecated-apis.ts";
import { stageNames } from "./targets.ts";

/** What reading a Cluster's API server for deprecated APIs gave. */
export type DeprecatedApiRead =
  | { readonly kind: "read"; readonly apis: readonly DeprecatedApi[] }
  | { readonly kind: "unavailable"; readonly why: string };

/** One check's verdict on one Cluster: a block, or a note people should see. */
export interface PreflightFinding {
  readonly cluster: string;
  readonly reason: string;
  readonly message: string;
  readonly blocks: boolean;
}

/** What the checks of one Cluster are given. */
export interface PreflightSubject {
  readonly cluster: Cluster;
  /** Its ClusterProfile (undefined: none of its name). */
  readonly profile: ClusterProfile | undefined;
  /** Its API server's deprecated APIs (undefined: not read). */
  readonly deprecated: DeprecatedApiRead | undefined;
}

/** `[major, minor]` of a version (`1.34.2`, `1.34`, `v1.34`), undefined for anything else. */
function minorOf(version: string): readonly [number, number] | undefined {
  const parts = parseVersion(version)?.parts;
  return parts && parts.length >= 2 ? [parts[0] ?? 0, parts[1] ?? 0] : undefined;
}

/** Negative when `a` is older; compares only the parts both name (a partial `1.34` equals every `1.34.x`). */
function compareCommon(a: string, b: string): number {
  const x = parseVersion(a)?.parts ?? [];
  const y = parseVersion(b)?.parts ?? [];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const difference = (x[i] ?? 0) - (y[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

function offered(version: string, name: string, subject: PreflightSubject): PreflightFinding[] {
  const profileName = subject.cluster.spec.profile;
  const block = (message: string) => [
    { cluster: name, reason: ROLLOUT_REASONS.VersionNotOffered, message, blocks: true },
  ];
  if (!subject.profile)
    return block(
      `Cluster ${name}: its ClusterProfile ${profileName} does not exist, so nothing offers ${version}`,
    );
  const resolved = resolveVersion(version, subject.profile.spec.supportedVersions ?? []);
  if (resolved.kind !== "unsupported") return [];
  const list = (subject.profile.spec.supportedVersions ?? []).map((v) => v.version).join(", ") || "none";
  return block(
    `Cluster ${name}: ClusterProfile ${profileName} does not offer ${version} (it offers ${list})`,
  );
}

function skew(version: string, name: string, subject: PreflightSubject): PreflightFinding[] {
  const current = subject.cluster.spec.kubernetes?.version;
  if (!current)
    return [
      {
        cluster: name,
        reason: ROLLOUT_REASONS.VersionSkewNotChecked,
        message: `Cluster ${name} names no version (its provider chose one): skew not checked`,
        blocks: false,
      },
    ];
  const block = (message: string) => [
    { cluster: name, reason: ROLLOUT_REASONS.VersionSkew, message, blocks: true },
  ];
  if (compareCommon(version, current) < 0)
    return block(`Cluster ${name} is at ${current}: ${version} would be a downgrade`);
  const [major, minor] = minorOf(version) ?? [0, 0];
  const [fromMajor, fromMinor] = minorOf(current) ?? [major, minor];
  if (major !== fromMajor || minor - fromMinor > 1)
    return block(
      `Cluster ${name} is at ${current}: ${version} is more than one minor above it (upgrade one minor at a time)`,
    );
  return [];
}

function deprecatedApis(
  version: string,
  name: string,
  subject: PreflightSubject,
  required: boolean,
): PreflightFinding[] {
  const read = subject.deprecated;
  if (!read || read.kind === "unavailable")
    return [
      {
        cluster: name,
        reason: ROLLOUT_REASONS.DeprecatedAPIsNotChecked,
        message: `Cluster ${name}: deprecated APIs not checked: ${read?.why ?? "its API server was not read yet"}`,
        blocks: required,
      },
    ];
  const [major, minor] = minorOf(version) ?? [0, 0];
  const removed = read.apis.filter((api) => {
    const at = minorOf(api.removedRelease);
    return at !== undefined && (at[0] < major || (at[0] === major && at[1] <= minor));
  });
  if (removed.length === 0) return [];
  const named = removed.map((api) => `${apiName(api)} (removed in ${api.removedRelease})`).join(", ");
  return [
    {
      cluster: name,
      reason: ROLLOUT_REASONS.DeprecatedAPIsInUse,
      message: `Cluster ${name}'s API server was asked for ${named}, which ${version} no longer serves`,
      blocks: true,
    },
  ];
}

/** Every finding of the three checks of one Cluster, in the order offered, skew, deprecated APIs. */
export function preflightOf(spec: RolloutSpec, subject: PreflightSubject): PreflightFinding[] {
  const name = subject.cluster.metadata.name ?? "";
  const required = spec.preflight?.requireDeprecatedAPICheck === true;
  // A settings-only run keeps each Cluster's version: nothing of it to check.
  if (spec.version === undefined) return [];
  return [
    ...offered(spec.version, name, subject),
    ...skew(spec.version, name, subject),
    ...deprecatedApis(spec.version, name, subject, required),
  ];
}

/**
 * The targets whose API servers the runtime should read before the next step: those still pending in the first
 * stage not finished and in the one after it (the step may finish the first), from the frozen set as recorded
 * (or as it would be frozen now, before the start).
 */
export function preflightCandidates(spec: RolloutSpec, targets: readonly RolloutTarget[]): RolloutTarget[] {
  if (spec.version === undefined) return [];
  const names = stageNames(spec);
  const open = names.findIndex((stage) =>
    targets.some((t) => t.stage === stage && t.progress !== "done" && t.progress !== "skipped"),
  );
  if (open < 0) return [];
  const stages = new Set(names.slice(open, open + 2));
  return targets.filter((target) => stages.has(target.stage) && target.progress === "pending");
}

/** The reasons in the order people should read them: blocks first. */
export function blocking(findings: readonly PreflightFinding[]): PreflightFinding[] {
  return findings.filter((finding) => finding.blocks);
}

/** At most this many findings are spelled out in a condition; the rest are counted. */
const SPELLED_OUT = 5;

/** The `Preflight` condition of stage `stage` from its findings: blocked (the first block's reason) or passed. */
export function preflightCondition(
  stage: string,
  findings: readonly PreflightFinding[],
): { status: "True" | "False"; reason: string; message: string } {
  const blocks = blocking(findings);
  if (blocks.length > 0) {
    const shown = blocks.slice(0, SPELLED_OUT).map((finding) => `${finding.reason}: ${finding.message}`);
    const more = blocks.length - shown.length;
    return {
      status: "False",
      reason: blocks[0]?.reason ?? ROLLOUT_REASONS.VersionNotOffered,
      message: `stage ${stage} blocked: ${shown.join("; ")}${more > 0 ? `; and ${more} more` : ""}`,
    };
  }
  // Notes grouped by reason, the Clusters named briefly: a note per Cluster of a large stage would not fit.
  const notes = new Map<string, PreflightFinding[]>();
  for (const finding of findings) notes.set(finding.reason, [...(notes.get(finding.reason) ?? []), finding]);
  const said = [...notes.values()].map((group) =>
    group.length === 1
      ? (group[0]?.message ?? "")
      : `${group[0]?.reason} on ${namesShown(group.map((finding) => finding.cluster))}: ${group[0]?.message}`,
  );
  return {
    status: "True",
    reason: ROLLOUT_REASONS.PreflightPassed,
    message: `stage ${stage}: nothing blocks${said.length > 0 ? `; ${said.join("; ")}` : ""}`,
  };
}
