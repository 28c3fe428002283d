/**
 * A Cluster's ClusterConfigs applied to the Shoot the engine wants, as openMCP's Gardener provider does: per
 * ClusterConfig in the Cluster's order, its extensions merged into `spec.extensions` by type, its resources into
 * `spec.resources` by name, then its RFC 6902 patches on the manifest. Pure.
 */

import jsonPatch from "fast-json-patch"; // CommonJS: Node cannot see its named exports
import type { ResolvedClusterConfig } from "../api/backend.ts";
import type { JsonObject, JsonValue } from "../api/common.ts";
import { isObject } from "./shared/settings.ts";

const { applyOperation, deepClone, getValueByPointer } = jsonPatch;

/**
 * A Shoot manifest as far as ClusterConfigs touch it: what they may not change, and the spec they change. (The
 * Shoot type itself lives in gardener-shoot.ts, which applies ClusterConfigs; this file needs nothing else of it.)
 */
export interface ShootManifest {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec: JsonObject & { readonly kubernetes?: JsonObject & { readonly version?: string } };
}

/** Why a Cluster's ClusterConfigs cannot make its Shoot: names the ClusterConfig and what to change. */
export class ClusterConfigError extends Error {
  override readonly name = "ClusterConfigError";
  /** `NotFound` when the named object is missing, `Invalid` when its content cannot be applied. */
  readonly kind: "NotFound" | "Invalid";
  constructor(kind: "NotFound" | "Invalid", message: string) {
    super(message);
    this.kind = kind;
  }
}

/** Where the configs come from, for messages. */
export interface ClusterConfigPlace {
  /** The Cluster's (and so the ClusterConfigs') namespace. */
  readonly namespace: string;
  readonly cluster: string;
}

const PATCH_OPS = new Set(["add", "remove", "replace", "move", "copy", "test"]);

/**
 * `shoot` with `configs` applied, a new object (`shoot` is left as it is). Throws a {@link ClusterConfigError}
 * naming the ClusterConfig when one is missing, malformed, or its patches cannot be applied, or when they would
 * change what the engine owns: the Shoot's apiVersion, kind, name and namespace, its Kubernetes version (the
 * Cluster's `spec.kubernetes.version` says that) and the annotations that tie it to its Cluster.
 */
export function applyClusterConfigs<S extends ShootManifest>(
  shoot: S,
  configs: readonly ResolvedClusterConfig[] | undefined,
  place: ClusterConfigPlace,
  ownedAnnotations: readonly string[],
): S {
  if (!configs || configs.length === 0) return shoot;
  let current = deepClone(shoot) as ShootManifest;
  for (const config of configs) {
    const where = `ClusterConfig ${place.namespace}/${config.name}`;
    if (!config.found)
      throw new ClusterConfigError(
        "NotFound",
        `${where} (spec.clusterConfigs of Cluster ${place.namespace}/${place.cluster}) does not exist; create it or remove it from the list`,
      );
    const fail = (what: string): never => {
      throw new ClusterConfigError("Invalid", `${where}: ${what}`);
    };
    const spec = config.spec;
    const extensions = listOf(spec.extensions, "spec.extensions", fail);
    const resources = listOf(spec.resources, "spec.resources", fail);
    const patches = listOf(spec.patches, "spec.patches", fail);
    const options = isObject(spec.patchOptions) ? spec.patchOptions : {};
    const shootSpec = current.spec as Record<string, JsonValue>;
    if (extensions.length > 0)
      shootSpec.extensions = mergedBy(asArray(shootSpec.extensions), extensions, "type", fail);
    if (resources.length > 0)
      shootSpec.resources = mergedBy(asArray(shootSpec.resources), resources, "name", fail);
    patches.forEach((operation, index) => {
      current = applied(current, operation, index, options, fail);
    });
    guardOwnedFields(shoot, current, ownedAnnotations, fail);
  }
  return current as S;
}

/** `stored` with each of `wanted` put in by `key`: replacing the entry with the same key, else appended. */
function mergedBy(
  stored: readonly JsonValue[],
  wanted: readonly JsonValue[],
  key: "type" | "name",
  fail: (what: string) => never,
): JsonValue[] {
  const result = [...stored];
  for (const entry of wanted) {
    if (!isObject(entry) || typeof entry[key] !== "string" || entry[key] === "")
      fail(`every entry of spec.${key === "type" ? "extensions" : "resources"} needs a ${key}`);
    const at = result.findIndex((x) => isObject(x) && x[key] === (entry as JsonObject)[key]);
    if (at === -1) result.push(entry);
    else result[at] = entry;
  }
  return result;
}

/** The Shoot after one patch operation; honours `ignoreMissingOnRemove` and `createMissingOnAdd`. */
function applied(
  shoot: ShootManifest,
  operation: JsonValue,
  index: number,
  options: JsonObject,
  fail: (what: string) => never,
): ShootManifest {
  if (!isObject(operation) || typeof operation.op !== "string" || !PATCH_OPS.has(operation.op))
    return fail(`spec.patches[${index}] needs an op (add, remove, replace, move, copy or test)`);
  const path = operation.path;
  if (typeof path !== "string" || (path !== "" && !path.startsWith("/")))
    return fail(
      `spec.patches[${index}].path ${JSON.stringify(path)} is not a JSON pointer (write it like /spec/purpose)`,
    );
  const what = `spec.patches[${index}] (${operation.op} ${path})`;
  if (operation.op === "remove" && options.ignoreMissingOnRemove === true && !exists(shoot, path))
    return shoot;
  if (operation.op === "add" && options.createMissingOnAdd === true) createParents(shoot, path);
  try {
    return applyOperation(shoot, operation as never, true, true).newDocument as ShootManifest;
  } catch (error) {
    // The library's message lists the whole document after its first line: only the first line is passed on.
    const reason = String((error as Error).message ?? error).split("\n")[0];
    return fail(`${what} cannot be applied to the Shoot: ${reason}`);
  }
}

function exists(document: unknown, path: string): boolean {
  try {
    return getValueByPointer(document, path) !== undefined;
  } catch {
    return false;
  }
}

/** Creates the missing objects on the way to `path` (never through arrays or other values). */
function createParents(document: ShootManifest, path: string): void {
  const segments = path
    .split("/")
    .slice(1, -1)
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
  let node = document as unknown as JsonValue;
  for (const segment of segments) {
    if (!isObject(node)) return;
    const record = node as Record<string, JsonValue>;
    if (record[segment] === undefined) record[segment] = {};
    node = record[segment] as JsonValue;
  }
}

/** Throws when the patched Shoot changed what the engine owns. */
function guardOwnedFields(
  before: ShootManifest,
  after: ShootManifest,
  ownedAnnotations: readonly string[],
  fail: (what: string) => never,
): void {
  const changed: string[] = [];
  if (!isObject(after as unknown as JsonValue) || !isObject(after.metadata as unknown as JsonValue))
    return void fail("its patches removed the Shoot's metadata");
  if (!isObject(after.spec)) return void fail("its patches removed the Shoot's spec");
  if (after.apiVersion !== before.apiVersion) changed.push("apiVersion");
  if (after.kind !== before.kind) changed.push("kind");
  if (after.metadata.name !== before.metadata.name) changed.push("metadata.name");
  if (after.metadata.namespace !== before.metadata.namespace) changed.push("metadata.namespace");
  if (after.spec.kubernetes?.version !== before.spec.kubernetes?.version)
    changed.push("spec.kubernetes.version (set it in the Cluster's spec.kubernetes.version)");
  for (const key of ownedAnnotations)
    if (after.metadata.annotations?.[key] !== before.metadata.annotations?.[key])
      changed.push(`metadata.annotations.${key}`);
  if (changed.length > 0) fail(`its patches may not change the Shoot's ${changed.join(", ")}`);
}

function listOf(value: JsonValue | undefined, where: string, fail: (what: string) => never): JsonValue[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail(`${where} must be a list`);
  return [...(value as JsonValue[])];
}

function asArray(value: JsonValue | undefined): readonly JsonValue[] {
  return Array.isArray(value) ? (value as JsonValue[]) : [];
}
