/** Chooses a Cluster's Kubernetes version from what it asks for and what its profile supports. Pure. */
import type { SupportedVersion } from "../../api/cluster-profile.ts";

/** A full version as numbers. */
type Triple = readonly [major: number, minor: number, patch: number];

/** The outcome of {@link resolveVersion}: a version to build, or why there is none. */
export type VersionResolution =
  | { readonly kind: "accepted"; readonly version: string; readonly deprecated: boolean }
  | { readonly kind: "unsupported"; readonly message: string }
  | { readonly kind: "downgrade"; readonly version: string; readonly message: string };

const versionPattern = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/;

/** Parses `1.32.8`, `v1.32.8` or the partial `1.32`; undefined for anything else. */
export function parseVersion(text: string): { readonly parts: readonly number[] } | undefined {
  const match = versionPattern.exec(text.trim());
  if (!match) return undefined;
  return {
    parts: match
      .slice(1)
      .filter((part) => part !== undefined)
      .map(Number),
  };
}

/** Orders full versions numerically (so 1.10 > 1.9); negative when `a` is older. */
export function compareVersions(a: string, b: string): number {
  return compareTriples(toTriple(a), toTriple(b));
}

function toTriple(text: string): Triple {
  const parts = parseVersion(text)?.parts ?? [];
  return [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0];
}

/**
 * Resolves the version to build or keep.
 *
 * - `requested` absent: the newest non-deprecated supported version (a deprecated one only if nothing
 *   else is offered, flagged as such).
 * - `requested` full (`1.32.8`): exactly that, if supported.
 * - `requested` partial (`1.32`): the newest supported `1.32.x`, non-deprecated preferred.
 * - `current` (the version the cluster runs) newer than the result: a downgrade, never performed.
 */
export function resolveVersion(
  requested: string | undefined,
  supported: readonly SupportedVersion[],
  current?: string,
): VersionResolution {
  // Parse every version once: this runs on every reconcile of every Cluster.
  const offered = supported.flatMap((entry) => {
    const parts = parseVersion(entry.version)?.parts;
    return parts?.length === 3 ? [{ entry, triple: parts as unknown as Triple }] : [];
  });
  const list = () => offered.map(({ entry }) => entry.version).join(", ") || "none";
  let candidates = offered;
  if (requested !== undefined && requested !== "") {
    const parsed = parseVersion(requested);
    if (!parsed) {
      return {
        kind: "unsupported",
        message: `spec.kubernetes.version "${requested}" is not a version like 1.32 or 1.32.8; supported: ${list()}`,
      };
    }
    candidates = offered.filter(({ triple }) => parsed.parts.every((part, index) => triple[index] === part));
    if (candidates.length === 0) {
      return {
        kind: "unsupported",
        message: `Kubernetes ${requested} is not offered by this profile; supported: ${list()}`,
      };
    }
  } else if (candidates.length === 0) {
    return {
      kind: "unsupported",
      message: "the profile offers no Kubernetes version; add supportedVersions",
    };
  }
  const newestFirst = [...candidates].sort((a, b) => compareTriples(b.triple, a.triple));
  const chosen =
    newestFirst.find(({ entry }) => !entry.deprecated) ?? (newestFirst[0] as (typeof newestFirst)[number]);
  const running = current === undefined ? undefined : parseVersion(current)?.parts;
  if (running?.length === 3 && compareTriples(chosen.triple, running as unknown as Triple) < 0) {
    return {
      kind: "downgrade",
      version: chosen.entry.version,
      message: `the cluster runs Kubernetes ${current}; ${requested ? `"${requested}"` : "the default"} resolves to ${chosen.entry.version}, and downgrades are not supported`,
    };
  }
  return { kind: "accepted", version: chosen.entry.version, deprecated: chosen.entry.deprecated === true };
}

function compareTriples(x: Triple, y: Triple): number {
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}
