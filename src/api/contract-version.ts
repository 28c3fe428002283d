/** Whether a backend built for one version of the backend contract can run on an engine implementing another. */

/** The verdict on a backend's contract version; `why` is a message for a person, naming both versions. */
export type ContractCompatibility =
  | { readonly compatible: true }
  | { readonly compatible: false; readonly why: string };

const versionPattern = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** `MAJOR.MINOR.PATCH` as numbers, or undefined when `version` is not one. */
export function parseContractVersion(version: unknown): readonly [number, number, number] | undefined {
  if (typeof version !== "string") return undefined;
  const match = versionPattern.exec(version);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/**
 * Semantic versioning from the engine's side: the same major version, and at least the minor version the
 * backend was built for (a newer minor version only adds what a backend may use; an older engine lacks it).
 * Patch versions never matter.
 */
export function contractCompatibility(engine: string, backend: unknown): ContractCompatibility {
  const ours = parseContractVersion(engine);
  if (!ours) throw new Error(`the engine's own contract version "${engine}" is not MAJOR.MINOR.PATCH`);
  const theirs = parseContractVersion(backend);
  if (!theirs) {
    const given = backend === undefined ? "no contractVersion" : `contractVersion ${JSON.stringify(backend)}`;
    return {
      compatible: false,
      why: `it exports ${given}; a backend module exports the backend contract version it was built for as contractVersion, "MAJOR.MINOR.PATCH" (this engine implements ${engine})`,
    };
  }
  if (theirs[0] !== ours[0]) {
    return {
      compatible: false,
      why: `it was built for backend contract ${backend}, this engine implements backend contract ${engine}; major versions differ, so the contract changed in a way the backend cannot follow: use a release of the backend built for ${ours[0]}.x, or an engine implementing ${theirs[0]}.x`,
    };
  }
  if (theirs[1] > ours[1]) {
    return {
      compatible: false,
      why: `it was built for backend contract ${backend}, this engine implements backend contract ${engine}, which lacks what ${theirs[0]}.${theirs[1]} added: upgrade the engine to one implementing ${theirs[0]}.${theirs[1]} or later`,
    };
  }
  return { compatible: true };
}
