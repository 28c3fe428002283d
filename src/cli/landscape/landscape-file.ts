/**
 * The landscape file `landscape up` reads: one small YAML document naming the backend, its ProviderConfig and the
 * purposes to make clusters for. Parsed and checked here, purely; every problem is one line naming the field.
 *
 * ```yaml
 * apiVersion: engine.openmcp.cloud/v1alpha1
 * kind: Landscape
 * metadata: { name: local }
 * spec:
 *   backend: kind                 # the backend that makes every cluster of the landscape
 *   providerName: kind            # the engine's --provider-name (default: the backend's name)
 *   environment: default          # the engine's --environment (default: default)
 *   backendOptions: {}            # --backend-option pairs of the engine
 *   providerConfig:               # the ProviderConfig every cluster is made from (name default: the backend's)
 *     spec: { supportedVersions: [{ version: 1.36.3 }] }
 *   purposes:                     # default: openMCP's four, each with a cluster of its own
 *     - name: platform            # always there: the engine runs in its cluster
 *     - name: onboarding
 *       cluster: platform         # shares the platform's cluster instead of getting one
 *     - name: workload
 *     - name: mcp
 *   secrets:                      # Secrets the ProviderConfig names (e.g. a garden's kubeconfig), from files
 *     - name: garden              # in the landscape's namespace unless `namespace` says otherwise
 *       files: { kubeconfig: ./garden.kubeconfig }   # relative to the landscape file
 * ```
 */
import { parseDocument } from "yaml";
import { ENGINE_API_VERSION } from "../../api/constants.ts";
import type { ProviderConfigSpec } from "../../api/provider-config.ts";

export const LANDSCAPE_KIND = "Landscape";

/** openMCP's purposes, in the order a landscape is made: the platform first, the engine runs there. */
export const DEFAULT_PURPOSES = ["platform", "onboarding", "workload", "mcp"] as const;

/** The purpose whose cluster runs the engine; every landscape has it. */
export const PLATFORM_PURPOSE = "platform";

/** One purpose of the landscape, and the cluster that serves it. */
export interface LandscapePurpose {
  readonly name: string;
  /** The purpose whose cluster this one shares; absent: a cluster of its own. */
  readonly sharesClusterOf?: string;
}

/** A landscape, as `landscape up` makes it. */
export interface Landscape {
  readonly name: string;
  readonly backend: string;
  readonly providerName: string;
  readonly environment: string;
  readonly backendOptions: Readonly<Record<string, string>>;
  readonly providerConfig: { readonly name: string; readonly spec: ProviderConfigSpec };
  /** The platform first; the others in the file's order. */
  readonly purposes: readonly LandscapePurpose[];
  /** Secrets made on the bootstrap and in the platform cluster, each key's text read from a file. */
  readonly secrets: readonly LandscapeSecret[];
}

/** A Secret of the landscape: its keys' files (paths as written, relative to the landscape file). */
export interface LandscapeSecret {
  readonly name: string;
  /** Absent: the landscape's namespace. */
  readonly namespace?: string;
  readonly files: Readonly<Record<string, string>>;
}

/** A landscape file that cannot be used; `problems` names each field that is wrong. */
export class LandscapeFileError extends Error {
  readonly source: string;
  readonly problems: readonly string[];
  constructor(source: string, problems: readonly string[]) {
    super(`${source}: ${problems.length === 1 ? problems[0] : `\n  - ${problems.join("\n  - ")}`}`);
    this.name = "LandscapeFileError";
    this.source = source;
    this.problems = problems;
  }
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

type Fields = Record<string, unknown>;
const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Parses and checks a landscape file's text; `source` names it in errors (e.g. its path). */
export function parseLandscapeFile(text: string, source: string): Landscape {
  const document = parseDocument(text);
  if (document.errors.length > 0)
    throw new LandscapeFileError(
      source,
      document.errors.map((e) => `not YAML: ${e.message.split("\n")[0]}`),
    );
  return checkLandscape(document.toJS(), source);
}

/** Checks a parsed landscape document and fills in the defaults. */
export function checkLandscape(value: unknown, source: string): Landscape {
  const problems: string[] = [];
  const problem = (text: string) => {
    problems.push(text);
    return undefined;
  };
  if (!isFields(value)) throw new LandscapeFileError(source, ["expected one YAML mapping (a Landscape)"]);
  if (value.apiVersion !== ENGINE_API_VERSION)
    problem(`apiVersion must be ${ENGINE_API_VERSION}, found ${JSON.stringify(value.apiVersion)}`);
  if (value.kind !== LANDSCAPE_KIND)
    problem(`kind must be ${LANDSCAPE_KIND}, found ${JSON.stringify(value.kind)}`);
  const metadata = isFields(value.metadata) ? value.metadata : {};
  const name = label(metadata.name, "metadata.name", problem);
  const spec = isFields(value.spec) ? value.spec : (problem("spec is missing") ?? {});
  const backend =
    typeof spec.backend === "string" && spec.backend !== ""
      ? spec.backend
      : problem("spec.backend is missing (e.g. kind, gardener or local)");
  const providerName =
    spec.providerName === undefined ? backend : label(spec.providerName, "spec.providerName", problem);
  const environment =
    spec.environment === undefined ? "default" : label(spec.environment, "spec.environment", problem);
  const backendOptions = stringMap(spec.backendOptions, "spec.backendOptions", problem);
  const providerConfig = providerConfigOf(spec.providerConfig, backend, problem);
  const purposes = purposesOf(spec.purposes, problem);
  const secrets = secretsOf(spec.secrets, problem);
  if (problems.length > 0 || !name || !backend || !providerName || !environment || !providerConfig)
    throw new LandscapeFileError(source, problems);
  return { name, backend, providerName, environment, backendOptions, providerConfig, purposes, secrets };
}

function label(value: unknown, field: string, problem: (text: string) => undefined): string | undefined {
  if (typeof value !== "string" || !DNS_LABEL.test(value) || value.length > 63)
    return problem(
      `${field} must be a DNS label (lower case letters, digits and '-'), found ${JSON.stringify(value)}`,
    );
  return value;
}

function stringMap(
  value: unknown,
  field: string,
  problem: (text: string) => undefined,
): Record<string, string> {
  if (value === undefined) return {};
  if (!isFields(value)) return problem(`${field} must be a mapping of strings`) ?? {};
  const map: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (typeof entry === "string" || typeof entry === "number" || typeof entry === "boolean")
      map[key] = String(entry);
    else problem(`${field}.${key} must be a string`);
  }
  return map;
}

function providerConfigOf(
  value: unknown,
  backend: string | undefined,
  problem: (text: string) => undefined,
): Landscape["providerConfig"] | undefined {
  if (backend === undefined) return undefined;
  const given =
    value === undefined
      ? {}
      : isFields(value)
        ? value
        : (problem("spec.providerConfig must be a mapping") ?? {});
  const name = given.name === undefined ? backend : label(given.name, "spec.providerConfig.name", problem);
  const spec =
    given.spec === undefined
      ? {}
      : isFields(given.spec)
        ? given.spec
        : problem("spec.providerConfig.spec must be a mapping");
  if (name === undefined || spec === undefined) return undefined;
  if (spec.backend !== undefined && spec.backend !== backend)
    return problem(
      `spec.providerConfig.spec.backend is ${JSON.stringify(spec.backend)}, but spec.backend is ${JSON.stringify(backend)}: leave it out`,
    );
  return { name, spec: { ...(spec as Partial<ProviderConfigSpec>), backend } };
}

function purposesOf(value: unknown, problem: (text: string) => undefined): LandscapePurpose[] {
  if (value === undefined) return DEFAULT_PURPOSES.map((name) => ({ name }));
  if (!Array.isArray(value) || value.length === 0)
    return problem("spec.purposes must be a list of purposes (each with a name)") ?? [];
  const purposes: LandscapePurpose[] = [];
  const ownCluster = new Set<string>();
  for (const [index, entry] of value.entries()) {
    const field = `spec.purposes[${index}]`;
    const fields = isFields(entry) ? entry : typeof entry === "string" ? { name: entry } : {};
    const name = label(fields.name, `${field}.name`, problem);
    if (name === undefined) continue;
    if (purposes.some((p) => p.name === name)) {
      problem(`${field}.name: purpose ${name} is listed twice`);
      continue;
    }
    const shares = fields.cluster;
    if (shares === undefined || shares === name) {
      ownCluster.add(name);
      purposes.push({ name });
      continue;
    }
    if (name === PLATFORM_PURPOSE)
      problem(`${field}.cluster: the platform purpose has a cluster of its own (the engine runs there)`);
    else if (typeof shares !== "string" || !ownCluster.has(shares))
      problem(
        `${field}.cluster: ${JSON.stringify(shares)} is not a purpose listed before it with a cluster of its own (${[...ownCluster].join(", ") || "none yet"})`,
      );
    else purposes.push({ name, sharesClusterOf: shares });
  }
  if (!purposes.some((p) => p.name === PLATFORM_PURPOSE))
    return problem(`spec.purposes must include ${PLATFORM_PURPOSE}: the engine runs in its cluster`) ?? [];
  // The platform first: every other cluster is made by the engine running there.
  return [
    ...purposes.filter((p) => p.name === PLATFORM_PURPOSE),
    ...purposes.filter((p) => p.name !== PLATFORM_PURPOSE),
  ];
}

const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

function secretsOf(value: unknown, problem: (text: string) => undefined): LandscapeSecret[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return problem("spec.secrets must be a list of Secrets (name, files)") ?? [];
  const secrets: LandscapeSecret[] = [];
  for (const [index, entry] of value.entries()) {
    const field = `spec.secrets[${index}]`;
    const fields = isFields(entry) ? entry : {};
    const name = label(fields.name, `${field}.name`, problem);
    const namespace =
      fields.namespace === undefined ? undefined : label(fields.namespace, `${field}.namespace`, problem);
    const files = stringMap(fields.files, `${field}.files`, problem);
    if (Object.keys(files).length === 0) problem(`${field}.files must name at least one key and its file`);
    for (const key of Object.keys(files))
      if (!SECRET_KEY.test(key))
        problem(`${field}.files.${key}: not a Secret key (letters, digits, '-', '_', '.')`);
    if (name !== undefined) secrets.push({ name, ...(namespace ? { namespace } : {}), files });
  }
  return secrets;
}
