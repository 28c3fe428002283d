/** Pure steps seen as the runtime writes them: each result with the patches its desired object amounts to. */
import type { AccessStepInput } from "../../src/machines/access-request/step.ts";
import { stepAccessRequest } from "../../src/machines/access-request/step.ts";
import type { ClusterStepInput } from "../../src/machines/cluster/step.ts";
import { stepCluster } from "../../src/machines/cluster/step.ts";
import type { PatchOperation } from "../../src/machines/shared/json-patch.ts";
import type { MachineStep } from "../../src/machines/shared/machine-step.ts";
import { changesTo } from "../../src/runtime/patch-object.ts";

/** The operations the runtime would send for a step's desired object: metadata, then status. */
export interface StepWrites {
  readonly metadataPatch: readonly PatchOperation[];
  readonly statusPatch: readonly PatchOperation[];
}

/** What the runtime writes for `result`, a step of `object`. */
export function writesOf(
  object: { readonly metadata?: object; readonly status?: unknown },
  result: MachineStep<unknown, unknown, unknown>,
): StepWrites {
  return {
    metadataPatch: changesTo(object, "metadata", result.desired.metadata),
    statusPatch: changesTo(object, "status", result.desired.status),
  };
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
