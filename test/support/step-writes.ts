/**
 * Pure steps seen as the runtime writes them, said once for every kind: the patches a step's desired
 * object amounts to, and the object after them, in the runtime's order (the object — metadata and owned
 * spec fields in one patch — then the status).
 */
import type { AccessStepInput } from "../../src/machines/access-request/step.ts";
import { stepAccessRequest } from "../../src/machines/access-request/step.ts";
import type { ClusterStepInput } from "../../src/machines/cluster/step.ts";
import { stepCluster } from "../../src/machines/cluster/step.ts";
import { applied, type PatchOperation } from "../../src/machines/shared/json-patch.ts";
import type { MachineStep } from "../../src/machines/shared/machine-step.ts";
import { changesTo } from "../../src/runtime/api-server/patch-object.ts";

/** The operations the runtime would send for a step's desired object. */
export interface StepWrites {
  readonly metadataPatch: readonly PatchOperation[];
  /** Operations on the spec fields the step owns (sent with the metadata's). */
  readonly specPatch: readonly PatchOperation[];
  readonly statusPatch: readonly PatchOperation[];
}

/** An object a step writes, as far as its writes go. */
interface Written {
  readonly metadata?: { readonly resourceVersion?: string };
  readonly spec?: unknown;
  readonly status?: unknown;
}

/** What the runtime writes for `result`, a step of `object`. */
export function writesOf(object: Written, result: MachineStep<unknown, unknown, unknown>): StepWrites {
  return {
    metadataPatch: changesTo(object, "metadata", result.desired.metadata),
    specPatch: changesTo(object, "spec", result.desired.spec),
    statusPatch: changesTo(object, "status", result.desired.status),
  };
}

/**
 * What the API server would hold after the step's writes, in the runtime's order: one patch of the
 * object (metadata and owned spec fields), then one of the status; each write bumps the resourceVersion.
 */
export function afterWrites<T extends Written>(object: T, result: MachineStep<unknown, unknown, unknown>): T {
  const { metadataPatch, specPatch, statusPatch } = writesOf(object, result);
  let next = object;
  for (const patch of [[...metadataPatch, ...specPatch], statusPatch]) {
    if (patch.length === 0) continue;
    next = applied(next, patch);
    const resourceVersion = String(Number(next.metadata?.resourceVersion ?? 0) + 1);
    next = { ...next, metadata: { ...next.metadata, resourceVersion } };
  }
  return next;
}

/** {@link stepCluster} with the writes it amounts to. */
export function stepClusterWrites(input: ClusterStepInput) {
  const result = stepCluster(input);
  return { ...result, ...writesOf(input.cluster, result) };
}

/** {@link stepAccessRequest} with the writes it amounts to. */
export function stepAccessWrites(input: AccessStepInput) {
  const result = stepAccessRequest(input);
  return { ...result, ...writesOf(input.request, result) };
}
